/**
 * @module The page's recent-events panel: the takeovers, fenced writes, lost leases and store errors the event log
 * recorded, or how to start one when there is none.
 */
import type { Snapshot } from '../model.js';
import { fill, h, table } from './dom.js';
import { clock, shortKey } from './format.js';

export function renderEvents(element: Element, snapshot: Snapshot) {
  const events = snapshot.events;
  const title = h('h2', {}, 'Recent events');
  if (events === null)
    return fill(element, title, h('p', { class: 'muted' }, 'The event log could not be read.'));
  if (!events.available) {
    return fill(
      element,
      title,
      h(
        'p',
        { class: 'muted' },
        'No event log yet: takeovers, fenced writes, lost leases and store errors appear here once an application writes one (docs/dashboard.md).',
      ),
    );
  }
  const rows = events.recent.map((event) =>
    h(
      'tr',
      { 'data-testid': 'event-row', 'data-type': event.type },
      h('td', {}, clock(event.at)),
      h('td', {}, h('span', { class: `badge ${event.type}` }, event.type)),
      h('td', { class: 'key', title: event.key ?? '' }, event.key ? shortKey(event.key) : '–'),
      h('td', { class: 'small' }, event.detail),
    ),
  );
  fill(
    element,
    title,
    table(['time', 'event', 'key', 'detail'], rows, 'No takeover, fenced write, lost lease or store error.'),
  );
}
