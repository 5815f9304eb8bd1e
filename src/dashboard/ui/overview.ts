/**
 * @module The page's overview: the numbers an operator checks first, as tiles, then the outcome rates and the outbox
 * backlog as charts.
 */
import type { RateBucket, Snapshot } from '../model.js';
import { lines, type Series, stackedBars } from './charts.js';
import { fill, h, s } from './dom.js';
import { count, duration } from './format.js';

function tile(label: string, value: string, id: string, note?: string, alert = false) {
  return h(
    'div',
    { class: `tile${alert ? ' alert' : ''}` },
    h('div', { class: 'value', 'data-testid': id }, value),
    h('div', { class: 'label' }, label),
    note === undefined ? null : h('div', { class: 'note' }, note),
  );
}

/** The numbers an operator checks first, each one also a link target for the tests (`data-testid`). */
export function renderTiles(element: Element, snapshot: Snapshot) {
  const { keys, outbox, parked } = snapshot;
  const c = keys?.counts;
  const lower = c?.truncated ? ' (at least)' : '';
  fill(
    element,
    tile(
      'in progress',
      c ? count(c.inProgress) : '–',
      'count-inProgress',
      c ? `${count(c.leaseExpired)} with lease run out${lower}` : undefined,
      (c?.leaseExpired ?? 0) > 0,
    ),
    tile(
      'completed',
      c ? count(c.completed) : '–',
      'count-completed',
      c ? `of ${count(c.records)} records${lower}` : undefined,
    ),
    tile('released', c ? count(c.released) : '–', 'count-released'),
    outbox
      ? tile(
          'outbox pending',
          count(outbox.pending),
          'outbox-pending',
          `${count(outbox.inFlight)} in flight, ${count(outbox.retrying)} retrying`,
        )
      : null,
    outbox
      ? tile(
          'outbox lag',
          duration(outbox.lagMs),
          'outbox-lag',
          'age of the oldest pending event',
          outbox.lagMs > 60_000,
        )
      : null,
    outbox ? tile('dead letters', count(outbox.dead), 'outbox-dead', undefined, outbox.dead > 0) : null,
    parked ? tile('parked messages', count(parked.count), 'parked-count', 'inbox', parked.count > 0) : null,
  );
}

export const OUTCOME_SERIES: readonly (Series<RateBucket> & { type: string })[] = [
  { type: 'completed', label: 'completed', color: '#2f9e44' },
  { type: 'replayed', label: 'replayed', color: '#1c7ed6' },
  { type: 'conflict', label: 'conflict (409)', color: '#f08c00' },
  { type: 'released', label: 'released', color: '#868e96' },
  { type: 'mismatch', label: 'mismatch (422)', color: '#ae3ec9' },
  { type: 'takeover', label: 'takeover', color: '#e03131' },
  { type: 'storeError', label: 'store error', color: '#862e2e' },
].map((one) => ({ ...one, value: (bucket: RateBucket) => bucket.counts[one.type] ?? 0 }));

function legend(series: readonly { label: string; color: string }[]) {
  return h(
    'div',
    { class: 'legend' },
    // An SVG swatch: the page's policy allows no inline style attributes.
    ...series.map((one) =>
      h(
        'span',
        {},
        s(
          'svg',
          { width: 10, height: 10, class: 'swatch' },
          s('rect', { width: 10, height: 10, rx: 2, fill: one.color }),
        ),
        one.label,
      ),
    ),
  );
}

export function renderRates(element: Element, snapshot: Snapshot) {
  const events = snapshot.events;
  const title = h('h2', {}, 'Outcomes per 10 s');
  if (events === null)
    return fill(element, title, h('p', { class: 'muted' }, 'The event log could not be read.'));
  if (!events.available) {
    return fill(
      element,
      title,
      h(
        'p',
        { class: 'muted' },
        'No event log yet. Pass onEvent: log.onEvent (an EventLog from oncely/dashboard) to your engine or middleware; see docs/dashboard.md.',
      ),
    );
  }
  fill(
    element,
    title,
    stackedBars('Outcomes per 10 seconds', events.rates, OUTCOME_SERIES),
    legend(OUTCOME_SERIES),
  );
}

export function renderBacklog(element: Element, snapshot: Snapshot) {
  const outbox = snapshot.outbox;
  const title = h('h2', {}, 'Outbox backlog');
  if (outbox === null) return fill(element, title, h('p', { class: 'muted' }, 'No outbox to show.'));
  const series = [
    { label: 'pending', color: '#1c7ed6', value: (p: { pending: number }) => p.pending },
    { label: 'dead', color: '#e03131', value: (p: { dead: number }) => p.dead },
  ];
  const lag = [{ label: 'lag', color: '#f08c00', value: (p: { lagMs: number }) => p.lagMs / 1_000 }];
  fill(
    element,
    title,
    lines('Outbox backlog over time', outbox.history, series, (n) =>
      Number.isInteger(n) ? count(n) : n.toFixed(1),
    ),
    legend(series),
    h('h3', {}, 'Lag: age of the oldest pending event (s)'),
    lines('Outbox lag over time', outbox.history, lag, (n) => n.toFixed(n < 10 ? 1 : 0)),
    h('p', { class: 'muted small' }, 'Sampled by this dashboard at each refresh since it started.'),
  );
}
