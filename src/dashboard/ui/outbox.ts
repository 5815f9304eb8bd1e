/**
 * @module The page's outbox panel: per-topic backlog, in flight, retrying, dead letters and lag, and the dead
 * letters with their replay and discard actions.
 */
import type { Snapshot } from '../model.js';
import { actionButton } from './actions.js';
import { fill, h, table } from './dom.js';
import { ago, count, duration } from './format.js';

export function renderOutbox(element: Element, snapshot: Snapshot) {
  const outbox = snapshot.outbox;
  const title = h('h2', {}, 'Outbox');
  if (outbox === null) return fill(element, title, h('p', { class: 'muted' }, 'No outbox to show.'));
  const now = snapshot.at;
  const topics = outbox.topics.map((topic) =>
    h(
      'tr',
      { 'data-testid': 'topic-row', 'data-topic': topic.topic },
      h('td', {}, topic.topic),
      h('td', { 'data-testid': 'topic-pending' }, count(topic.pending)),
      h('td', {}, count(topic.inFlight)),
      h('td', {}, count(topic.retrying)),
      h('td', { 'data-testid': 'topic-dead', class: topic.dead > 0 ? 'bad' : '' }, count(topic.dead)),
      h(
        'td',
        { class: topic.lagMs > 60_000 ? 'bad' : '' },
        topic.oldestPending ? duration(topic.lagMs) : '–',
      ),
      h(
        'td',
        { class: 'small', 'data-testid': 'topic-oldest' },
        topic.oldestPending
          ? `#${topic.oldestPending.id}${topic.oldestPending.key ? ` key ${topic.oldestPending.key}` : ''}, ${topic.oldestPending.attempts} attempts${topic.oldestPending.lastError ? `: ${topic.oldestPending.lastError}` : ''}`
          : '–',
      ),
    ),
  );
  const actions = snapshot.actions;
  const dead = outbox.deadLetters.map((letter) =>
    h(
      'tr',
      { 'data-testid': 'dead-row', 'data-id': letter.id },
      h('td', {}, letter.id),
      h('td', {}, letter.topic),
      h('td', {}, letter.key ?? '–'),
      h('td', {}, letter.attempts),
      h('td', {}, ago(letter.deadAt, now)),
      h('td', { class: 'error', 'data-testid': 'dead-error' }, letter.lastError ?? '–'),
      actions
        ? h(
            'td',
            { class: 'buttons' },
            actionButton('Replay', 'replay', { ids: [letter.id] }),
            actionButton(
              'Discard',
              'discard',
              { ids: [letter.id] },
              `Discard dead letter #${letter.id} for good?`,
            ),
          )
        : null,
    ),
  );
  fill(
    element,
    title,
    h('h3', {}, 'Backlog per topic ', h('span', { class: 'muted' }, 'biggest first')),
    table(
      ['topic', 'pending', 'in flight', 'retrying', 'dead', 'lag', 'oldest pending'],
      topics,
      'Nothing pending, nothing dead.',
    ),
    h(
      'h3',
      {},
      'Dead letters ',
      h(
        'span',
        { class: 'muted' },
        `${dead.length} of ${count(outbox.dead)}, latest first; payloads are not shown`,
      ),
    ),
    table(
      ['id', 'topic', 'key', 'attempts', 'dead', 'last error', ...(actions ? [''] : [])],
      dead,
      'No dead letter.',
    ),
  );
}
