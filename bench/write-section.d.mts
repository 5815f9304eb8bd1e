/** Replaces the marked section `name` of docs/benchmarks.md with `markdown` (the other sections stay). */
export function writeSection(name: string, markdown: string): void;
