// `npm run mutate`: StrykerJS over each group of stryker/groups.mjs in turn (engine, memory store, Redis store,
// PostgreSQL store, HTTP policy), then one report of them all. Not part of `npm test`.
//
//   npm run mutate                     every group, from scratch
//   npm run mutate -- redis http       only these groups (their reports are replaced, the others' kept)
//   npm run mutate -- --incremental    reuse the results of mutants whose code and tests did not change
//
// Writes reports/mutation/<group>.json|html (Stryker's), reports/mutation/mutation.json|html (all groups) and
// reports/mutation/summary.md (score, time and load per group, every surviving mutant). Exits non-zero when the
// score of all groups together is below 85%. docs/mutation.md records the last full run.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GROUPS } from '../stryker/groups.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'reports/mutation');
const FLOOR = 85;
const require = createRequire(import.meta.url);

const args = process.argv.slice(2);
const passThrough = args.filter((arg) => arg.startsWith('--'));
const named = args.filter((arg) => !arg.startsWith('--'));
for (const name of named) {
  if (!GROUPS.some((group) => group.name === name)) {
    process.stderr.write(`unknown group ${name}: ${GROUPS.map((group) => group.name).join(', ')}\n`);
    process.exit(2);
  }
}
const selected = named.length === 0 ? GROUPS : GROUPS.filter((group) => named.includes(group.name));
mkdirSync(OUT, { recursive: true });

const load = () => loadavg().map((value) => value.toFixed(2));
const timings = readTimings();
const started = Date.now();
for (const group of selected) {
  const from = Date.now();
  const loadBefore = load();
  log(`group ${group.name}: ${group.mutate.join(' ')} (load average ${loadBefore.join(' ')})`);
  const run = spawnSync(
    process.execPath,
    [join(ROOT, 'node_modules/@stryker-mutator/core/bin/stryker.js'), 'run', ...passThrough],
    { cwd: ROOT, stdio: 'inherit', env: { ...process.env, ONCELY_MUTATE_GROUP: group.name } },
  );
  if (run.status !== 0) {
    log(`group ${group.name}: stryker exited with ${run.status ?? run.signal}`);
    process.exit(1);
  }
  timings[group.name] = {
    seconds: Math.round((Date.now() - from) / 1000),
    loadBefore,
    loadAfter: load(),
    at: new Date(from).toISOString(),
  };
}
writeFileSync(join(OUT, 'timings.json'), `${JSON.stringify(timings, null, 2)}\n`);

const reports = GROUPS.filter((group) => existsSync(join(OUT, `${group.name}.json`))).map((group) => ({
  group: group.name,
  report: JSON.parse(readFileSync(join(OUT, `${group.name}.json`), 'utf8')),
}));
const merged = mergeReports(reports);
writeFileSync(join(OUT, 'mutation.json'), JSON.stringify(merged));
writeFileSync(join(OUT, 'mutation.html'), html(merged));
const rows = reports.map(({ group, report }) => ({ group, ...tally(report) }));
const total = tally(merged);
const summary = markdown(rows, total, merged, timings, Date.now() - started);
writeFileSync(join(OUT, 'summary.md'), summary);
process.stdout.write(`\n${summary.split('\n## Surviving')[0]}\nreports: ${OUT}\n`);
if (total.score < FLOOR) {
  log(`mutation score ${total.score.toFixed(2)}% is below ${FLOOR}%`);
  process.exit(1);
}

function log(line) {
  process.stdout.write(`[mutate ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

function readTimings() {
  try {
    return JSON.parse(readFileSync(join(OUT, 'timings.json'), 'utf8'));
  } catch {
    return {};
  }
}

/** Stryker's counts and score: detected (killed, timed out) over valid (detected, survived, not covered). */
function tally(report) {
  const counts = {
    Killed: 0,
    Timeout: 0,
    Survived: 0,
    NoCoverage: 0,
    Ignored: 0,
    RuntimeError: 0,
    CompileError: 0,
  };
  for (const file of Object.values(report.files))
    for (const mutant of file.mutants) counts[mutant.status] = (counts[mutant.status] ?? 0) + 1;
  const detected = counts.Killed + counts.Timeout;
  const valid = detected + counts.Survived + counts.NoCoverage;
  return { ...counts, valid, score: valid === 0 ? 100 : (100 * detected) / valid };
}

/** One report of every group: files are disjoint; mutant ids get the group's name, as they repeat across runs. */
function mergeReports(list) {
  const files = {};
  const testFiles = {};
  for (const { group, report } of list) {
    for (const [path, file] of Object.entries(report.files)) {
      files[path] = {
        ...file,
        mutants: file.mutants.map((mutant) => ({ ...mutant, id: `${group}-${mutant.id}` })),
      };
    }
    for (const [path, file] of Object.entries(report.testFiles ?? {})) {
      const known = testFiles[path];
      if (known === undefined) testFiles[path] = { ...file, tests: [...file.tests] };
      else {
        const ids = new Set(known.tests.map((test) => test.id));
        known.tests.push(...file.tests.filter((test) => !ids.has(test.id)));
      }
    }
  }
  return {
    schemaVersion: '1.0',
    thresholds: { high: 90, low: FLOOR },
    projectRoot: ROOT,
    files,
    testFiles,
  };
}

function html(report) {
  const script = readFileSync(
    require.resolve('mutation-testing-elements/dist/mutation-test-elements.js'),
    'utf8',
  );
  const json = JSON.stringify(report).replace(/</g, '<"+"');
  return `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>oncely mutation report</title><script>${script}</script></head>
<body><mutation-test-report-app titlePostfix="oncely"></mutation-test-report-app>
<script>document.querySelector('mutation-test-report-app').report = ${json};</script></body></html>
`;
}

function markdown(rowsByGroup, all, report, times, elapsedMs) {
  const pct = (value) => `${value.toFixed(2)}%`;
  const lines = [
    '# Mutation testing: last run',
    '',
    `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version}; this run ${Math.round(elapsedMs / 1000)} s.`,
    '',
    '| group | mutants | killed | timed out | survived | no coverage | ignored | score | time | load average before → after |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
  ];
  for (const row of [...rowsByGroup, { group: '**all**', ...all }]) {
    const time = times[row.group];
    const seconds =
      row.group === '**all**'
        ? rowsByGroup.reduce((sum, each) => sum + (times[each.group]?.seconds ?? 0), 0)
        : time?.seconds;
    const loadText = time === undefined ? '' : `${time.loadBefore.join(' ')} → ${time.loadAfter.join(' ')}`;
    lines.push(
      `| ${row.group} | ${row.valid + row.Ignored} | ${row.Killed} | ${row.Timeout} | ${row.Survived} | ${row.NoCoverage} | ${row.Ignored} | ${pct(row.score)} | ${seconds === undefined ? '' : `${Math.floor(seconds / 60)}m ${seconds % 60}s`} | ${loadText} |`,
    );
  }
  lines.push('', '## Surviving and uncovered mutants', '');
  for (const [path, file] of Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b))) {
    const source = file.source.split('\n');
    for (const mutant of file.mutants) {
      if (mutant.status !== 'Survived' && mutant.status !== 'NoCoverage') continue;
      const { start, end } = mutant.location;
      const original =
        start.line === end.line
          ? source[start.line - 1].slice(start.column - 1, end.column - 1)
          : `${source[start.line - 1].slice(start.column - 1)} …`;
      const shorten = (text) => (text.length > 80 ? `${text.slice(0, 77)}...` : text).replace(/\|/g, '\\|');
      lines.push(
        `- ${path}:${start.line}:${start.column} ${mutant.mutatorName} (${mutant.status}): \`${shorten(original.trim())}\` → \`${shorten(mutant.replacement ?? '')}\``,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
