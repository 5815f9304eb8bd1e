/**
 * Test support: the one completed record the CLI's store tests (MySQL, DynamoDB) make through the store and then
 * look for with the commands, and what `oncely dashboard` serves of it over HTTP.
 */
import { expect } from 'vitest';
import type { KeyDetail, Snapshot } from '../../../src/dashboard/model.js';
import { type Store, scopedKey } from '../../../src/store.js';

/** A payment answered 201 with `{"id":"pay_cli"}`, as `oncely inspect --scope 'POST /payments' --key cli-1` finds it. */
export const PAYMENT = {
  scope: 'POST /payments',
  key: 'cli-1',
  hashed: scopedKey('POST /payments', 'cli-1'),
  body: '{"id":"pay_cli"}',
} as const;

/** Claims and completes the payment's key, labelled with its route, as the HTTP adapters would. */
export async function completePayment(store: Store): Promise<void> {
  const claim = await store.begin({
    key: PAYMENT.hashed,
    fingerprint: 'f',
    leaseMs: 10_000,
    retentionMs: 60_000,
    label: PAYMENT.scope,
  });
  if (claim.kind !== 'acquired') throw new Error(claim.kind);
  await store.complete({
    key: PAYMENT.hashed,
    token: claim.token,
    outcome: {
      status: 201,
      headers: [['content-type', 'application/json']],
      body: Buffer.from(PAYMENT.body),
      encoding: 'identity',
      storage: 'inline',
    },
    retentionMs: 60_000,
  });
}

/**
 * Fetches what a dashboard on `url` serves (the page, its snapshot, the payment's record) and checks that it shows
 * the payment, and only it, from a store of `kind` with no outbox panel.
 */
export async function expectDashboardShowsPayment(url: URL, kind: string): Promise<void> {
  const page = await fetch(url);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('<html');
  const snapshot = (await (await fetch(new URL('/api/snapshot', url))).json()) as Snapshot;
  expect(snapshot).toMatchObject({ store: { kind }, outbox: null, errors: [] });
  expect(snapshot.keys?.counts).toMatchObject({ records: 1, completed: 1, inProgress: 0 });
  expect(snapshot.keys?.completed).toMatchObject([
    { key: PAYMENT.hashed, status: 201, label: PAYMENT.scope },
  ]);
  const lookup = new URL(`/api/key?hashed=${PAYMENT.hashed}`, url);
  const detail = (await (await fetch(lookup)).json()) as KeyDetail;
  expect(detail).toMatchObject({ found: true, outcome: { status: 201, bodyBytes: PAYMENT.body.length } });
}
