/**
 * @module The conformance suite's model-based property test: random interleavings of begin, complete, release, renew
 * and delete by three callers, with clock moves, checked step by step against `KeyModel`.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { BeginResult, Store, TransitionResult } from '../../core/store.js';
import type { FakeClock } from '../fake-clock.js';
import { type ConformanceOptions, LEASE_MS, outcome, RETENTION_MS, withStore } from '../harness.js';
import { KeyModel } from '../model.js';

/** What several callers racing on one key remember: the model, and the token each last acquired. */
interface World {
  readonly model: KeyModel;
  readonly tokens: Map<number, number>;
}
interface Real {
  readonly store: Store;
  readonly clock: FakeClock;
  readonly key: string;
}
type Command = fc.AsyncCommand<World, Real, false>;

const CALLERS = [0, 1, 2];

class Begin implements Command {
  constructor(
    readonly caller: number,
    readonly fingerprint: string,
  ) {}
  check = () => true;
  async run(world: World, real: Real) {
    const now = real.clock.now();
    const expected = world.model.begin(now, this.fingerprint, LEASE_MS, RETENTION_MS);
    const actual: BeginResult = await real.store.begin({
      key: real.key,
      fingerprint: this.fingerprint,
      leaseMs: LEASE_MS,
      retentionMs: RETENTION_MS,
    });
    if (expected.kind === 'replayOf') {
      assert.ok(actual.kind === 'replay', `expected replay, got ${actual.kind}`);
      assert.equal(Buffer.from(actual.outcome.body).toString(), expected.body);
      return;
    }
    assert.deepEqual(actual, expected);
    if (actual.kind === 'acquired') world.tokens.set(this.caller, actual.token);
  }
  toString = () => `begin(caller ${this.caller}, ${this.fingerprint})`;
}

/** complete / release / renew by a caller with the token it last acquired (possibly a stale one). */
class Transition implements Command {
  constructor(
    readonly caller: number,
    readonly verb: 'complete' | 'release' | 'renew',
  ) {}
  check = (world: Readonly<World>) => world.tokens.has(this.caller);
  async run(world: World, real: Real) {
    const token = world.tokens.get(this.caller)!;
    const now = real.clock.now();
    const { store, key } = real;
    const body = `by ${this.caller} with ${token}`;
    let expected: TransitionResult;
    let actual: TransitionResult;
    if (this.verb === 'complete') {
      expected = world.model.complete(now, token, body, RETENTION_MS);
      actual = await store.complete({ key, token, outcome: outcome(body), retentionMs: RETENTION_MS });
    } else if (this.verb === 'release') {
      expected = world.model.release(now, token);
      actual = await store.release({ key, token });
    } else {
      expected = world.model.renew(now, token, LEASE_MS);
      actual = await store.renew({ key, token, leaseMs: LEASE_MS });
    }
    assert.deepEqual(actual, expected);
  }
  toString = () => `${this.verb}(caller ${this.caller})`;
}

/** An operator deletes the record, whatever its state; the callers keep the tokens they hold. */
class Delete implements Command {
  check = () => true;
  async run(world: World, real: Real) {
    const expected = world.model.delete(real.clock.now());
    assert.equal(await real.store.delete(real.key), expected);
  }
  toString = () => 'delete()';
}

class Advance implements Command {
  constructor(readonly ms: number) {}
  check = () => true;
  async run(_world: World, real: Real) {
    real.clock.advance(this.ms);
  }
  toString = () => `advance(${this.ms})`;
}

class Inspect implements Command {
  check = () => true;
  async run(world: World, real: Real) {
    const now = real.clock.now();
    const expected =
      world.model.record && world.model.record.expiresAt > now ? world.model.record : undefined;
    const actual = await real.store.get(real.key);
    if (expected === undefined) return assert.equal(actual, undefined);
    assert.ok(actual, 'the store lost a record the model still has');
    const { state, fingerprint, token, attempt, leaseUntil, expiresAt } = actual;
    assert.deepEqual(
      { state, fingerprint, token, attempt, leaseUntil, expiresAt },
      {
        state: expected.state,
        fingerprint: expected.fingerprint,
        token: expected.token,
        attempt: expected.attempt,
        leaseUntil: expected.leaseUntil,
        expiresAt: expected.expiresAt,
      },
    );
  }
  toString = () => 'get()';
}

const caller = fc.constantFrom(...CALLERS);
const commands = [
  fc.tuple(caller, fc.constantFrom('f1', 'f2')).map(([c, f]) => new Begin(c, f)),
  fc
    .tuple(
      caller,
      fc.constantFrom('complete', 'release', 'renew') as fc.Arbitrary<'complete' | 'release' | 'renew'>,
    )
    .map(([c, v]) => new Transition(c, v)),
  fc.constantFrom(1, LEASE_MS / 2, LEASE_MS - 1, LEASE_MS, RETENTION_MS).map((ms) => new Advance(ms)),
  fc.constant(new Inspect()),
  fc.constant(new Delete()),
];

/**
 * Random interleavings of begin, complete, release, renew and delete from three callers, and clock moves, against
 * the model.
 */
export function propertyCases(options: ConformanceOptions): void {
  const { it } = options.harness;
  it(
    'model-based: every interleaving of callers and clock moves matches the state machine',
    withStore(options, async ({ store, clock }) => {
      await fc.assert(
        fc.asyncProperty(fc.commands(commands, { maxCommands: 40 }), async (cmds) => {
          const setup = () => ({
            model: { model: new KeyModel(), tokens: new Map<number, number>() },
            real: { store, clock, key: `conformance:model:${randomUUID()}` },
          });
          await fc.asyncModelRun(setup, cmds);
        }),
        { numRuns: options.propertyRuns ?? 100 },
      );
    }),
  );
}
