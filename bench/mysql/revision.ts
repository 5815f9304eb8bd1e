/**
 * @module The code a benchmark measured, for its environment line: the commit, and whether files under src/ had
 * uncommitted changes (other work in progress in a shared checkout runs too, and the line says so).
 */
import { execSync } from 'node:child_process';

export function measuredRevision(): string {
  const commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
  const changed = execSync('git status --porcelain -- src', { encoding: 'utf8' }).split('\n').filter(Boolean);
  return changed.length === 0
    ? commit
    : `${commit} with uncommitted changes to ${changed.length} paths under src/`;
}
