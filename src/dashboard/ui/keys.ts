/**
 * @module The page's keys panel: counts by state, the records of each state under the route or scope they were
 * labelled with, lease and age, their release and delete actions, and the inbox's parked messages.
 */
import type { KeyCounts, KeyRow, Snapshot } from '../model.js';
import { actionButton } from './actions.js';
import { fill, h, table } from './dom.js';
import { ago, count, duration, shortKey } from './format.js';

/** The hashed key, shortened, under the route or scope its record was labelled with (when it has one). */
const keyCell = (key: string, label?: string) =>
  h(
    'td',
    { class: 'key', title: key, 'data-key': key },
    label === undefined ? null : h('span', { class: 'label', 'data-testid': 'key-label' }, label),
    shortKey(key),
  );

function leaseCell(row: KeyRow) {
  const left = row.leaseLeftMs ?? 0;
  return h(
    'td',
    { class: left <= 0 ? 'bad' : '' },
    left <= 0 ? `ran out ${duration(-left)} ago` : duration(left),
  );
}

function keyActions(row: KeyRow, actions: boolean) {
  if (!actions) return null;
  return h(
    'td',
    { class: 'buttons' },
    row.state === 'inProgress'
      ? actionButton(
          'Release',
          'release',
          { key: row.key },
          'Release this key? The next request with it runs again; its current owner, if alive, is fenced.',
        )
      : null,
    actionButton(
      'Delete',
      'delete',
      { key: row.key },
      'Delete this record? The next request with the key runs again.',
    ),
  );
}

export function renderKeys(element: Element, snapshot: Snapshot) {
  const keys = snapshot.keys;
  const title = h('h2', {}, 'Keys');
  if (keys === null) return fill(element, title, h('p', { class: 'muted' }, 'The keys could not be read.'));
  const now = snapshot.at;
  const actions = snapshot.actions;
  const extra = actions ? [''] : [];
  const inProgress = keys.inProgress.map((row) =>
    h(
      'tr',
      { 'data-testid': 'in-progress-row' },
      keyCell(row.key, row.label),
      h('td', {}, row.attempt),
      leaseCell(row),
      h('td', {}, row.takenOver === null ? '–' : row.takenOver ? 'yes' : 'no'),
      h('td', {}, ago(row.createdAt, now)),
      keyActions(row, actions),
    ),
  );
  const completed = keys.completed.map((row) =>
    h(
      'tr',
      { 'data-testid': 'completed-row' },
      keyCell(row.key, row.label),
      h('td', {}, row.status ?? '–'),
      h('td', {}, row.attempt),
      h('td', {}, ago(row.completedAt, now)),
      h('td', {}, duration(row.expiresAt - now)),
      keyActions(row, actions),
    ),
  );
  const released = keys.released.map((row) =>
    h(
      'tr',
      { 'data-testid': 'released-row' },
      keyCell(row.key, row.label),
      h('td', {}, row.attempt),
      h('td', {}, ago(row.createdAt, now)),
      h('td', {}, duration(row.expiresAt - now)),
      keyActions(row, actions),
    ),
  );
  const shown = (rows: unknown[], total: number) => `${rows.length} of ${count(total)}`;
  fill(
    element,
    title,
    truncatedNotice(keys.counts),
    h(
      'h3',
      {},
      `In progress `,
      h('span', { class: 'muted' }, shown(inProgress, keys.counts.inProgress), ', least lease left first'),
    ),
    table(
      ['key', 'attempt', 'lease left', 'taken over', 'started', ...extra],
      inProgress,
      'No key is in progress.',
    ),
    h(
      'h3',
      {},
      `Completed `,
      h('span', { class: 'muted' }, shown(completed, keys.counts.completed), ', latest first'),
    ),
    table(['key', 'status', 'attempt', 'completed', 'expires in', ...extra], completed, 'No completed key.'),
    h(
      'h3',
      {},
      `Released `,
      h('span', { class: 'muted' }, shown(released, keys.counts.released), ', newest first'),
    ),
    table(['key', 'attempt', 'created', 'expires in', ...extra], released, 'No released key.'),
  );
}

/** Said at the top of the keys, where the numbers it qualifies are. */
function truncatedNotice(counts: KeyCounts) {
  if (!counts.truncated) return null;
  const walked = counts.scanned === undefined ? 'its limit' : `${count(counts.scanned)} keys`;
  return h(
    'p',
    { class: 'notice', 'data-testid': 'keys-truncated' },
    `The store's walk stopped after ${walked} (scanLimit: Redis keys scanned, PostgreSQL rows read) before its end; the counts and lists are a lower bound.`,
  );
}

export function renderParked(element: Element, snapshot: Snapshot) {
  const parked = snapshot.parked;
  const title = h('h2', {}, 'Inbox: parked messages');
  if (parked === null)
    return fill(element, title, h('p', { class: 'muted' }, 'Parked messages could not be read.'));
  const now = snapshot.at;
  const rows = parked.rows.map((row) =>
    h(
      'tr',
      { 'data-testid': 'parked-row' },
      keyCell(row.key),
      h('td', {}, row.attempt),
      h('td', {}, ago(row.parkedAt, now)),
      h('td', {}, duration(row.expiresAt - now)),
      snapshot.actions
        ? h(
            'td',
            { class: 'buttons' },
            actionButton(
              'Forget',
              'delete',
              { key: row.key },
              'Forget this parked message? Its next delivery runs the handler again.',
            ),
          )
        : null,
    ),
  );
  fill(
    element,
    title,
    table(
      ['key', 'attempts', 'parked', 'expires in', ...(snapshot.actions ? [''] : [])],
      rows,
      'No parked message.',
    ),
    h(
      'p',
      { class: 'muted small' },
      'A message is parked after its handler kept failing; the broker helper dead-lettered it. Keys are hashed: look one up by its inbox scope (inbox:<scope>) and message id.',
    ),
  );
}
