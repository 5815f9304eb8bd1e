/**
 * @module Encryption at rest, the wrapper: the store an engine uses when `encryption` is set. Every outcome on its
 * way in (`complete`, a transaction's `commit`) is sealed under its storage key; every outcome on its way out
 * (`begin`'s replay, `beginTransaction`'s replay, `get`) is opened or refused with `RecordUnreadableError`.
 * Everything else passes through, and optional methods exist only when the inner store has them (the engine
 * decides on transactional mode and on `waitFor` by their presence).
 */
import type { ResolvedEncryption } from './encryption-keys.js';
import type { RecordView, RecordViewOptions, StoreInspector, Survey, SurveyOptions } from './inspection.js';
import { decryptOutcome, encryptOutcome } from './outcome-cipher.js';
import type {
  BeginInput,
  BeginResult,
  CompleteInput,
  KeyRecord,
  PurgeOptions,
  ReleaseInput,
  RenewInput,
  Store,
  StoredOutcome,
  StoreEndpoint,
  StoreStats,
  StoreTransaction,
  TransactionBeginInput,
  TransactionBeginResult,
  TransitionResult,
  WaitForOptions,
} from './store.js';

export class EncryptedStore implements Store {
  readonly #inner: Store;
  readonly #encryption: ResolvedEncryption;
  // `declare`: a plain field declaration would define each one as undefined, and `'waitFor' in store` would lie.
  declare readonly waitFor?: (key: string, options: WaitForOptions) => Promise<boolean>;
  declare readonly stats?: () => Promise<StoreStats>;
  declare readonly purgeExpired?: (options?: PurgeOptions) => Promise<number>;
  declare readonly close?: () => Promise<void>;
  declare readonly beginTransaction?: (input: TransactionBeginInput) => Promise<TransactionBeginResult>;
  declare readonly inspector?: StoreInspector;

  constructor(inner: Store, encryption: ResolvedEncryption) {
    this.#inner = inner;
    this.#encryption = encryption;
    if (inner.waitFor) this.waitFor = (key, options) => inner.waitFor!(key, options);
    if (inner.stats) this.stats = () => inner.stats!();
    if (inner.purgeExpired) this.purgeExpired = (options) => inner.purgeExpired!(options);
    if (inner.close) this.close = () => inner.close!();
    if (inner.beginTransaction) this.beginTransaction = (input) => this.#beginTransaction(input);
    if (inner.inspector) this.inspector = new OpeningInspector(inner.inspector, encryption);
  }

  /** The inner store's name: logs and telemetry name the database, not the wrapper. */
  get name(): string {
    return this.#inner.name;
  }

  get endpoint(): StoreEndpoint | undefined {
    return this.#inner.endpoint;
  }

  begin(input: BeginInput): Promise<BeginResult> {
    return this.#inner.begin(input).then((result) => this.#opened(result, input.key));
  }

  async complete(input: CompleteInput): Promise<TransitionResult> {
    const { key, token, retentionMs } = input;
    const outcome = encryptOutcome(input.outcome, key, this.#encryption);
    return this.#inner.complete({ key, token, retentionMs, outcome });
  }

  release(input: ReleaseInput): Promise<TransitionResult> {
    return this.#inner.release(input);
  }

  renew(input: RenewInput): Promise<TransitionResult> {
    return this.#inner.renew(input);
  }

  async get(key: string): Promise<KeyRecord | undefined> {
    const record = await this.#inner.get(key);
    if (record?.outcome === undefined) return record;
    return { ...record, outcome: decryptOutcome(record.outcome, key, this.#encryption) };
  }

  delete(key: string): Promise<boolean> {
    return this.#inner.delete(key);
  }

  #beginTransaction(input: TransactionBeginInput): Promise<TransactionBeginResult> {
    return this.#inner.beginTransaction!(input).then((result) =>
      result.kind === 'acquired'
        ? {
            ...result,
            transaction: new EncryptedTransaction(result.transaction, input.key, this.#encryption),
          }
        : this.#opened(result, input.key),
    );
  }

  #opened<R extends { readonly kind: string }>(result: R, key: string): R {
    if (result.kind !== 'replay') return result;
    const replay = result as R & { readonly outcome: StoredOutcome };
    return { ...replay, outcome: decryptOutcome(replay.outcome, key, this.#encryption) };
  }
}

/**
 * The inner store's inspector, with outcomes opened: the listed completed records show their own status (the
 * store sees 0 on a sealed record), and a record's view shows what it holds sealed. oncely's marks (a parked
 * message) are kept in clear, so a survey's `mark` finds them as on any store.
 * An outcome that does not open is refused with `RecordUnreadableError`, as everywhere else.
 */
class OpeningInspector implements StoreInspector {
  readonly #inner: StoreInspector;
  readonly #encryption: ResolvedEncryption;

  constructor(inner: StoreInspector, encryption: ResolvedEncryption) {
    this.#inner = inner;
    this.#encryption = encryption;
  }

  /** The inner survey, with each listed completed record's status read from its opened outcome (≤ `limit`). */
  async survey(options: SurveyOptions): Promise<Survey> {
    const survey = await this.#inner.survey(options);
    const completed = await Promise.all(
      survey.lists.completed.map(async (summary) => {
        const view = await this.record(summary.key);
        return view === undefined ? summary : { ...summary, status: view.status };
      }),
    );
    return { ...survey, lists: { ...survey.lists, completed } };
  }

  async record(key: string, options?: RecordViewOptions): Promise<RecordView | undefined> {
    // The sealed bytes are the whole outcome: opening needs them, whether or not the caller wants the body.
    const view = await this.#inner.record(key, { body: true });
    if (view?.outcome?.body === undefined) return view;
    const stored = view.outcome;
    const opened = decryptOutcome({ ...stored, body: stored.body as Uint8Array }, key, this.#encryption);
    const { status, headers, body, encoding, storage } = opened;
    const outcome = { status, headers, bodyBytes: body.byteLength, encoding, storage };
    return {
      ...view,
      status,
      outcome: options?.body === true ? { ...outcome, body } : outcome,
    };
  }
}

/** A store's open transaction whose `commit` seals the outcome first; the rest is the inner transaction's. */
class EncryptedTransaction implements StoreTransaction {
  readonly #inner: StoreTransaction;
  readonly #key: string;
  readonly #encryption: ResolvedEncryption;

  constructor(inner: StoreTransaction, key: string, encryption: ResolvedEncryption) {
    this.#inner = inner;
    this.#key = key;
    this.#encryption = encryption;
  }

  get handle(): unknown {
    return this.#inner.handle;
  }

  get signal(): AbortSignal {
    return this.#inner.signal;
  }

  async commit(outcome: StoredOutcome, retentionMs: number): Promise<void> {
    return this.#inner.commit(encryptOutcome(outcome, this.#key, this.#encryption), retentionMs);
  }

  rollback(): Promise<void> {
    return this.#inner.rollback();
  }

  abort(): Promise<void> {
    return this.#inner.abort();
  }
}
