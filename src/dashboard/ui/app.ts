/**
 * @module The dashboard page: polls /api/snapshot every `refreshMs` (polling rather than server-sent events: it
 * works through every proxy and in a Fetch handler without holding a connection open per viewer) and redraws each
 * panel from it. Served by oncely/dashboard; bundled by scripts/embed-assets.mjs.
 */
import type { Snapshot } from '../model.js';
import { wireActions } from './actions.js';
import { ApiError, adoptTokenFromFragment, getJson, setToken, token } from './api.js';
import { fill, h } from './dom.js';
import { renderEvents } from './events.js';
import { clock } from './format.js';
import { renderKeys, renderParked } from './keys.js';
import { buildLookup, setLookupActions } from './lookup.js';
import { renderOutbox } from './outbox.js';
import { renderBacklog, renderRates, renderTiles } from './overview.js';

adoptTokenFromFragment();

const card = (id: string) => h('article', { class: 'card', id });
const status = h('span', { class: 'status', 'data-testid': 'status' }, 'connecting…');
const storeLabel = h('span', { class: 'store' });
const tokenInput = h('input', {
  type: 'password',
  placeholder: 'token',
  autocomplete: 'off',
  'aria-label': 'dashboard token',
  'data-testid': 'token',
});
tokenInput.value = token();
tokenInput.addEventListener('change', () => {
  setToken(tokenInput.value.trim());
  void refresh();
});
const tokenLabel = h('label', { class: 'token', hidden: true }, 'Token ', tokenInput);
const notices = h('section', { class: 'notices', 'data-testid': 'notices' });
const tiles = h('section', { class: 'tiles' });
const panels = {
  rates: card('rates'),
  backlog: card('backlog'),
  keys: card('keys'),
  lookup: card('lookup'),
  events: card('events'),
  outbox: card('outbox'),
  parked: card('parked'),
};
const toastArea = h('div', { class: 'toast', role: 'status', 'data-testid': 'toast' });

fill(
  document.getElementById('app')!,
  h('header', { class: 'top' }, h('h1', {}, 'oncely'), storeLabel, status, tokenLabel),
  notices,
  tiles,
  h('section', { class: 'row' }, panels.rates, panels.backlog),
  panels.keys,
  h('section', { class: 'row' }, panels.lookup, panels.events),
  panels.outbox,
  panels.parked,
  toastArea,
);
buildLookup(panels.lookup);

let timer: number | undefined;
let refreshMs = 2_000;

function toast(message: string, ok: boolean): void {
  fill(toastArea, h('p', { class: ok ? 'ok' : 'bad' }, message));
  toastArea.classList.add('shown');
  window.setTimeout(() => toastArea.classList.remove('shown'), 6_000);
}

wireActions({ refresh: () => void refresh(), toast });

function render(snapshot: Snapshot): void {
  refreshMs = snapshot.refreshMs;
  storeLabel.textContent = snapshot.store.label;
  tokenLabel.hidden = !(snapshot.actions || document.documentElement.dataset.tokenReads === 'true');
  setLookupActions(snapshot.actions);
  fill(
    notices,
    ...snapshot.errors.map((error) =>
      h('p', { class: 'bad', 'data-panel': error.panel }, `${error.panel}: ${error.message}`),
    ),
  );
  renderTiles(tiles, snapshot);
  renderRates(panels.rates, snapshot);
  renderBacklog(panels.backlog, snapshot);
  renderKeys(panels.keys, snapshot);
  renderEvents(panels.events, snapshot);
  renderOutbox(panels.outbox, snapshot);
  renderParked(panels.parked, snapshot);
}

async function refresh(): Promise<void> {
  window.clearTimeout(timer);
  try {
    const snapshot = await getJson<Snapshot>('/api/snapshot');
    render(snapshot);
    status.textContent = `live · ${clock(snapshot.at)}`;
    status.className = 'status live';
  } catch (error) {
    status.textContent =
      error instanceof ApiError && error.status === 401 ? 'needs the token' : 'cannot reach the dashboard';
    status.className = 'status down';
    if (error instanceof ApiError && error.status === 401) tokenLabel.hidden = false;
  }
  timer = window.setTimeout(() => void refresh(), refreshMs);
}

void refresh();
