/**
 * @module The page's charts, hand-drawn SVG: stacked bars and lines over time, a few dozen lines each, instead of a
 * chart library. The page needs nothing interactive beyond a tooltip, and no dependency then has to be vetted,
 * bundled, or kept free of network access.
 */

import { s } from './dom.js';
import { clock, count } from './format.js';

export interface Series<T> {
  readonly label: string;
  readonly color: string;
  readonly value: (point: T) => number;
}

const W = 640;
const H = 180;
const LEFT = 44;
const RIGHT = 8;
const TOP = 10;
const BOTTOM = 22;
const PLOT_W = W - LEFT - RIGHT;
const PLOT_H = H - TOP - BOTTOM;

/** A round ceiling for the y axis: 1, 2, 5 × 10ⁿ, so the labels read as plain numbers. */
function niceMax(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (value <= step * power) return step * power;
  return 10 * power;
}

function frame(max: number, format: (n: number) => string, times: readonly number[]): SVGElement[] {
  const parts: SVGElement[] = [];
  for (const fraction of [0, 0.5, 1]) {
    const y = TOP + PLOT_H * (1 - fraction);
    parts.push(s('line', { x1: LEFT, x2: W - RIGHT, y1: y, y2: y, class: 'grid' }));
    parts.push(
      s('text', { x: LEFT - 6, y: y + 4, class: 'axis', 'text-anchor': 'end' }, format(max * fraction)),
    );
  }
  if (times.length > 0) {
    const first = times[0]!;
    const last = times[times.length - 1]!;
    parts.push(s('text', { x: LEFT, y: H - 6, class: 'axis' }, clock(first)));
    parts.push(s('text', { x: W - RIGHT, y: H - 6, class: 'axis', 'text-anchor': 'end' }, clock(last)));
  }
  return parts;
}

function chart(label: string, ...children: (SVGElement | SVGElement[])[]): SVGElement {
  return s(
    'svg',
    { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-label': label },
    ...children.flat(),
  );
}

/** One stacked bar per bucket (events per 10 s), a tooltip with each bar's numbers. */
export function stackedBars<T extends { readonly at: number }>(
  label: string,
  points: readonly T[],
  series: readonly Series<T>[],
): SVGElement {
  const totals = points.map((p) => series.reduce((sum, one) => sum + one.value(p), 0));
  const max = niceMax(Math.max(0, ...totals));
  const width = PLOT_W / Math.max(points.length, 1);
  const bars = points.map((point, i) => {
    let y = TOP + PLOT_H;
    const x = LEFT + i * width;
    const rects = series.map((one) => {
      const height = (one.value(point) / max) * PLOT_H;
      y -= height;
      return s('rect', { x: x + 0.5, y, width: Math.max(width - 1, 0.5), height, fill: one.color });
    });
    const tip = `${clock(point.at)}: ${series.map((one) => `${one.label} ${one.value(point)}`).join(', ')}`;
    return s('g', {}, s('title', {}, tip), ...rects);
  });
  return chart(
    label,
    frame(
      max,
      (n) => count(Math.round(n)),
      points.map((p) => p.at),
    ),
    bars,
  );
}

/** Lines over time, one per series, on one y axis. */
export function lines<T extends { readonly at: number }>(
  label: string,
  points: readonly T[],
  series: readonly Series<T>[],
  format: (n: number) => string,
): SVGElement {
  const max = niceMax(Math.max(0, ...points.flatMap((p) => series.map((one) => one.value(p)))));
  const first = points[0]?.at ?? 0;
  const span = Math.max((points[points.length - 1]?.at ?? 0) - first, 1);
  const x = (at: number) => LEFT + ((at - first) / span) * PLOT_W;
  const y = (value: number) => TOP + PLOT_H * (1 - value / max);
  const paths = series.map((one) =>
    s('polyline', {
      points: points.map((p) => `${x(p.at).toFixed(1)},${y(one.value(p)).toFixed(1)}`).join(' '),
      fill: 'none',
      stroke: one.color,
      'stroke-width': 2,
      'stroke-linejoin': 'round',
    }),
  );
  return chart(
    label,
    frame(
      max,
      format,
      points.map((p) => p.at),
    ),
    paths,
  );
}
