// Redraws bench/http/chart.svg from the last run's bench/results/http.raw.json (no measuring).
import { readFileSync, writeFileSync } from 'node:fs';
import { ratioChart } from './chart.js';
import type { Summary } from './summary.js';

const { summaries } = JSON.parse(
  readFileSync(new URL('../results/http.raw.json', import.meta.url), 'utf8'),
) as {
  summaries: Summary[];
};
const pairs = summaries[0]?.pairs ?? 0;
writeFileSync(
  new URL('./chart.svg', import.meta.url),
  ratioChart(summaries, `HTTP adapters on Redis: throughput against the bare framework (${pairs} A/B pairs)`),
);
