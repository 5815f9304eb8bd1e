/**
 * Runs npm scripts side by side and fails when any of them fails: `node scripts/run-parallel.mjs a b`. `npm test`
 * uses it for the build and the type-check, two single-threaded compilers that need nothing of each other, so on a
 * 2-core machine they take as long as the slower one instead of both. Each script's output is printed whole when it
 * ends, so the two never interleave.
 */
import { spawn } from 'node:child_process';

const scripts = process.argv.slice(2);
if (scripts.length === 0) {
  process.stderr.write('usage: node scripts/run-parallel.mjs <npm script> [<npm script> ...]\n');
  process.exit(2);
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const runs = scripts.map(
  (script) =>
    new Promise((resolve) => {
      const child = spawn(npm, ['run', script, '--silent'], { stdio: ['ignore', 'pipe', 'pipe'] });
      const output = [];
      child.stdout.on('data', (chunk) => output.push(chunk));
      child.stderr.on('data', (chunk) => output.push(chunk));
      child.on('error', (error) => output.push(Buffer.from(`${error.message}\n`)));
      child.on('close', (code, signal) => {
        const text = Buffer.concat(output).toString();
        if (text !== '') process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
        if (code !== 0) process.stderr.write(`npm run ${script} failed (${signal ?? `exit ${code}`})\n`);
        resolve(code === 0);
      });
    }),
);

const passed = await Promise.all(runs);
process.exit(passed.every(Boolean) ? 0 : 1);
