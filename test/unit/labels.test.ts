/**
 * @module Record labels from the engine's side: the rules of `labelOf` (what a scope name becomes), and the label
 * each entry point gives a record (`idempotent()`: `fn:<scope>`, the inbox: `inbox:<scope>`), read back from the
 * store. The HTTP label is tested through real requests in test/http/labels.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { scopedKey } from '../../src/core/key.js';
import { isLabel, labelOf, MAX_LABEL_LENGTH } from '../../src/core/label.js';
import { Engine, idempotent, MemoryStore } from '../../src/index.js';
import { Inbox } from '../../src/messaging/consumer.js';
import * as storeEntry from '../../src/store.js';

describe('labelOf', () => {
  it('keeps a good scope name as it is (the same string) and gives none for none', () => {
    const scope = 'POST /payments/:id';
    assert.equal(labelOf(scope), scope);
    assert.equal(labelOf('fn:charge'), 'fn:charge');
    assert.equal(labelOf(undefined), undefined);
    assert.equal(labelOf(''), undefined);
    assert.equal(labelOf('x'.repeat(MAX_LABEL_LENGTH)), 'x'.repeat(MAX_LABEL_LENGTH));
  });

  it('replaces control characters, line separators and bidirectional overrides with U+FFFD', () => {
    assert.equal(
      labelOf('fn:a\u001b[31mred\nb\u0085c\u2028d\u202ee\u2066f\u007f'),
      'fn:a\uFFFD[31mred\uFFFDb\uFFFDc\uFFFDd\uFFFDe\uFFFDf\uFFFD',
    );
    assert.equal(labelOf('a\ud800b'), 'a\uFFFDb', 'a lone half of a surrogate pair');
    assert.equal(labelOf('a\udc00'), 'a\uFFFD');
  });

  it('cuts a long name to 200 characters ending in …, never inside a surrogate pair', () => {
    const long = labelOf('y'.repeat(300));
    assert.equal(long?.length, MAX_LABEL_LENGTH);
    assert.ok(long?.endsWith('y…'));
    // 198 ASCII characters, then emoji: the pair that would straddle the cut is left out whole.
    const emoji = labelOf(`${'a'.repeat(198)}${'😀'.repeat(10)}`);
    assert.equal(emoji, `${'a'.repeat(198)}…`);
    for (const label of [long!, emoji!]) assert.ok(isLabel(label));
  });

  it('is on oncely/store for store authors', () => {
    for (const name of ['checkLabel', 'isLabel', 'labelOf', 'MAX_LABEL_LENGTH'])
      assert.ok(name in storeEntry, name);
    assert.throws(() => storeEntry.checkLabel('a\nb', 'mine'), /mine store: a label is 1 to 200 characters/);
  });

  it('isLabel: 1 to 200 characters, no unsafe character, no lone surrogate', () => {
    assert.ok(isLabel('POST /zahlungen/:id 😀'));
    for (const bad of [
      '',
      'x'.repeat(201),
      'a\tb',
      'a\u0000',
      'a\u009b',
      'a\u2029',
      'a\u2069',
      'a\ud83d',
      '\ude00a',
    ])
      assert.equal(isLabel(bad), false, JSON.stringify(bad));
  });
});

describe('the label each entry point gives a record', () => {
  it('idempotent(): fn:<scope>, the function name by default, through replay', async () => {
    const store = new MemoryStore();
    async function charge(order: { id: string }) {
      return { paid: order.id };
    }
    const wrapped = idempotent(charge, { key: (order) => order.id, store });
    await wrapped({ id: 'o-1' });
    await wrapped({ id: 'o-1' });
    const record = await store.get(scopedKey('fn:charge', 'o-1'));
    assert.equal(record?.label, 'fn:charge');
    assert.equal(record?.state, 'completed');
    const refund = idempotent(async (id: string) => id, { key: (id) => id, store, scope: 'refunds' });
    await refund('r-1');
    assert.equal((await store.get(scopedKey('fn:refunds', 'r-1')))?.label, 'fn:refunds');
  });

  it('a scope name that makes a poor label is stored cleaned, and the call succeeds', async () => {
    const store = new MemoryStore();
    const scope = `tenant\u001b]0;pwned\u0007${'z'.repeat(300)}`;
    const run = idempotent(async (id: string) => id, { key: (id) => id, store, scope });
    assert.equal(await run('k-1'), 'k-1');
    const record = await store.get(scopedKey(`fn:${scope}`, 'k-1'));
    assert.ok(record?.label !== undefined && isLabel(record.label), JSON.stringify(record?.label));
    assert.ok(record.label.startsWith('fn:tenant\uFFFD]0;pwned\uFFFD'));
    assert.equal(record.label.length, MAX_LABEL_LENGTH);
  });

  it('the inbox: inbox:<scope>', async () => {
    const store = new MemoryStore();
    const inbox = new Inbox(async (message: { id: string }) => message.id, {
      store,
      messageId: (message) => message.id,
      scope: 'ledger',
    });
    assert.equal((await inbox.handle({ id: 'm-1' })).kind, 'processed');
    assert.equal((await store.get(inbox.keyOf('m-1')))?.label, 'inbox:ledger');
  });

  it('an engine call without a scope stores no label', async () => {
    const store = new MemoryStore();
    const engine = new Engine({ store });
    const begun = await engine.begin({ key: 'k'.repeat(43), fingerprint: 'f' });
    assert.ok(begun.kind === 'acquired');
    await begun.claim.release();
    assert.equal((await store.get('k'.repeat(43)))?.label, undefined);
  });
});
