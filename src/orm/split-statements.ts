/**
 * @module oncely's own DDL (schema.sql, rendered) as single statements, for ORMs whose raw query takes one statement
 * at a time. Only for text oncely wrote: statements end with `;` at the end of a line, and the one quoting form
 * that can hold a `;` inside, the `$oncely$ … $oncely$` body of a DO block, is kept whole.
 */
export function splitStatements(text: string): string[] {
  const statements: string[] = [];
  let current = '';
  let quoted = false;
  for (const line of text.split('\n')) {
    current += `${line}\n`;
    if ((line.match(/\$oncely\$/g)?.length ?? 0) % 2 === 1) quoted = !quoted;
    if (!quoted && line.trimEnd().endsWith(';')) {
      statements.push(current.trim().replace(/;$/, ''));
      current = '';
    }
  }
  if (current.trim() !== '') statements.push(current.trim());
  return statements;
}
