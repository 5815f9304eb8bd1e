/**
 * @module Aligned plain-text tables (numbers right-aligned) for the commands' output, in terminals and CI logs.
 */
/** Renders rows as an aligned plain-text table (numbers right-aligned), for terminals and CI logs alike. */
export function renderTable(
  headers: readonly string[],
  rows: ReadonlyArray<ReadonlyArray<string | number>>,
): string {
  const cells = [headers, ...rows.map((row) => row.map(String))];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? '').length)));
  const numeric = headers.map(
    (_, column) => rows.length > 0 && rows.every((row) => typeof row[column] === 'number'),
  );
  const line = (row: readonly string[]) =>
    row
      .map((cell, column) =>
        numeric[column] ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!),
      )
      .join('  ')
      .trimEnd();
  const rule = widths.map((width) => '-'.repeat(width)).join('  ');
  return [line(headers), rule, ...cells.slice(1).map(line)].join('\n');
}
