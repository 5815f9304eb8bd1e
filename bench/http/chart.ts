import type { Summary } from './summary.js';

const WIDTH = 900;
const ROW = 26;
const LEFT = 300;
const RIGHT = 40;
const TOP = 56;
const MAX_RATIO = 1.6;

const escapeXml = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/**
 * A horizontal bar chart of throughput ratios (layer / same framework without it), one bar per scenario, with
 * the spread of the pairs as a whisker and a line at 1.0×. Plain SVG written from the numbers: no browser needed.
 */
export function ratioChart(summaries: readonly Summary[], title: string): string {
  const height = TOP + summaries.length * ROW + 40;
  const x = (ratio: number) => LEFT + (Math.min(ratio, MAX_RATIO) / MAX_RATIO) * (WIDTH - LEFT - RIGHT);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="system-ui, sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="${WIDTH / 2}" y="22" text-anchor="middle" font-size="14" font-weight="600">${escapeXml(title)}</text>`,
    `<text x="${WIDTH / 2}" y="40" text-anchor="middle" fill="#555">bar: median of the per-pair ratios; whisker: min–max over the pairs; blue unique keys, green replays, grey npm peers and the minimal floor</text>`,
  ];
  for (const tick of [0, 0.25, 0.5, 0.75, 1, 1.25, 1.5]) {
    const at = x(tick);
    const strong = tick === 1;
    parts.push(
      `<line x1="${at}" y1="${TOP - 8}" x2="${at}" y2="${height - 30}" stroke="${strong ? '#333' : '#ddd'}" stroke-width="${strong ? 1.5 : 1}"/>`,
      `<text x="${at}" y="${height - 14}" text-anchor="middle" fill="#555">${tick}×</text>`,
    );
  }
  summaries.forEach((summary, index) => {
    const y = TOP + index * ROW;
    const label = `${summary.framework} · ${summary.variant} · ${summary.workload}`;
    const color = summary.variant.startsWith('oncely')
      ? summary.workload === 'unique'
        ? '#2b6cb0'
        : '#2f855a'
      : '#a0aec0';
    parts.push(
      `<text x="${LEFT - 8}" y="${y + 15}" text-anchor="end">${escapeXml(label)}</text>`,
      `<rect x="${LEFT}" y="${y + 4}" width="${x(summary.ratio) - LEFT}" height="${ROW - 10}" fill="${color}"/>`,
      `<line x1="${x(summary.ratioMin)}" y1="${y + ROW / 2}" x2="${x(summary.ratioMax)}" y2="${y + ROW / 2}" stroke="#111" stroke-width="1.5"/>`,
      `<text x="${x(summary.ratio) + 6}" y="${y + 8}" font-size="10" fill="#111">${summary.ratio.toFixed(2)}×</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
