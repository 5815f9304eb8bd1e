/**
 * @module The page's lookup panel: a form for one record (by scope and key, or by storage key) built once so typing
 * survives the refreshes, and the record it finds: its outcome's status and headers, its body only on request,
 * and its actions.
 */
import type { KeyBody, KeyDetail } from '../model.js';
import { actionButton } from './actions.js';
import { getJson } from './api.js';
import { fill, h } from './dom.js';
import { duration } from './format.js';

let actionsEnabled = false;

export function setLookupActions(enabled: boolean): void {
  actionsEnabled = enabled;
}

/** The form is built once (typing survives the refreshes); only its result area changes. */
export function buildLookup(element: Element): void {
  // A textarea: the adapters' default scope has a newline in it (method and route, then Authorization).
  const scope = h('textarea', {
    name: 'scope',
    rows: 2,
    placeholder: 'POST /payments⏎Bearer …',
    autocomplete: 'off',
  });
  const key = h('input', { name: 'key', placeholder: 'Idempotency-Key', autocomplete: 'off' });
  const hashed = h('input', {
    name: 'hashed',
    placeholder: 'or the storage key (43 characters)',
    autocomplete: 'off',
  });
  const result = h('div', { class: 'lookup-result', 'data-testid': 'lookup-result' });
  const form = h(
    'form',
    { class: 'lookup' },
    h('label', {}, 'Scope', scope),
    h('label', {}, 'Key', key),
    h('label', {}, 'Storage key', hashed),
    h('button', { type: 'submit' }, 'Look up'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const query: Record<string, string> =
      hashed.value.trim() !== '' ? { hashed: hashed.value.trim() } : { scope: scope.value, key: key.value };
    try {
      show(result, await getJson<KeyDetail>('/api/key', query));
    } catch (error) {
      fill(result, h('p', { class: 'bad' }, error instanceof Error ? error.message : String(error)));
    }
  });
  fill(
    element,
    h('h2', {}, 'Look up a key'),
    h(
      'p',
      { class: 'muted small' },
      'The scope as the adapters build it, newline included (docs/cli.md#oncely-inspect). A body is shown only when you ask, for this key.',
    ),
    form,
    result,
  );
}

function show(result: Element, detail: KeyDetail) {
  const record = detail.record;
  if (!detail.found || record === null) return fill(result, h('p', {}, `No record for ${detail.key}.`));
  const rows: [string, string][] = [
    ['storage key', record.key],
    ['route / scope', record.label ?? '–'],
    ['state', record.state],
    ['attempts', String(record.attempt)],
    ['fencing token', String(record.token)],
    ['fingerprint', record.fingerprint],
    ['created', new Date(record.createdAt).toISOString()],
    ['lease left', record.leaseLeftMs === null ? '–' : duration(record.leaseLeftMs)],
    ['completed', record.completedAt === null ? '–' : new Date(record.completedAt).toISOString()],
    ['expires', new Date(record.expiresAt).toISOString()],
  ];
  const outcome = detail.outcome;
  if (outcome) {
    rows.push(['status', String(outcome.status)]);
    for (const [name, value] of outcome.headers) rows.push([`header ${name}`, value]);
    rows.push(['body', `${outcome.bodyBytes} bytes stored (${outcome.encoding}, ${outcome.storage})`]);
  }
  const bodyArea = h('div', { 'data-testid': 'body-area' });
  const showBody = h('button', { type: 'button', 'data-testid': 'show-body' }, 'Show body');
  showBody.addEventListener('click', async () => {
    try {
      const body = await getJson<KeyBody>('/api/key/body', { hashed: record.key });
      fill(
        bodyArea,
        body.retained
          ? h(
              'pre',
              { class: 'body', 'data-testid': 'body-text' },
              body.text,
              body.truncated ? `\n… (${body.bytes} bytes in all)` : '',
            )
          : h('p', { class: 'muted' }, 'The body was not retained (too large, or in a blob store).'),
      );
    } catch (error) {
      fill(bodyArea, h('p', { class: 'bad' }, error instanceof Error ? error.message : String(error)));
    }
  });
  fill(
    result,
    h(
      'table',
      { class: 'fields' },
      h('tbody', {}, ...rows.map(([name, value]) => h('tr', {}, h('th', {}, name), h('td', {}, value)))),
    ),
    h(
      'div',
      { class: 'buttons' },
      outcome ? showBody : null,
      actionsEnabled && record.state === 'inProgress'
        ? actionButton(
            'Release',
            'release',
            { key: record.key },
            'Release this key? The next request with it runs again.',
          )
        : null,
      actionsEnabled
        ? actionButton(
            'Delete',
            'delete',
            { key: record.key },
            'Delete this record? The next request with the key runs again.',
          )
        : null,
    ),
    bodyArea,
  );
}
