// `npm run bench -- <scenario>`: runs one benchmark (or all of them, one after another, never overlapping) and
// lets it rewrite its own section of docs/benchmarks.md.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const scenarios = ['redis', 'postgres', 'orm', 'mysql', 'dynamodb', 'http', 'messaging'];
const asked = process.argv.slice(2);
const chosen = asked.length === 0 ? scenarios : asked;
for (const name of chosen) {
  if (!scenarios.includes(name) || !existsSync(new URL(`./${name}/run.ts`, import.meta.url))) {
    console.error(`unknown benchmark "${name}"; choose from: ${scenarios.join(', ')}`);
    process.exit(2);
  }
}
for (const name of chosen) {
  console.log(`\n==> bench/${name}`);
  const run = spawnSync(process.execPath, ['--import', 'tsx', `bench/${name}/run.ts`], { stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
