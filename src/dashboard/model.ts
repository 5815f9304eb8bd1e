/**
 * @module What the dashboard's API answers, shared by the server and the page (the page imports these types only).
 * Times are milliseconds since the epoch by the store's clock where it has one; ages and durations are ms. No shape
 * here carries a stored body or an outbox payload: those may hold personal data, so the page only ever gets a body
 * when it asks for one key (`KeyBody`).
 */

export type KeyStateName = 'inProgress' | 'completed' | 'released';

/** One record, without its outcome's headers or body. */
export interface KeyRow {
  /** The storage key (SHA-256 of scope and key, base64url): the raw key never reaches the store. */
  readonly key: string;
  /** The route or scope the key belongs to (`POST /payments`), where the record keeps one. */
  readonly label?: string;
  readonly state: KeyStateName;
  readonly attempt: number;
  readonly token: number;
  /** Time left on the lease (negative: it ran out and the next request takes over). In progress only. */
  readonly leaseLeftMs: number | null;
  readonly createdAt: number;
  readonly completedAt: number | null;
  readonly expiresAt: number;
  /** The stored status (0 for non-HTTP outcomes), completed records only, where the store's read reached it. */
  readonly status: number | null;
  /** Whether the latest claim took the key over from an owner whose lease ran out; null where the store cannot tell. */
  readonly takenOver: boolean | null;
}

export interface KeyCounts {
  readonly records: number;
  readonly inProgress: number;
  readonly completed: number;
  readonly released: number;
  /** In progress with a lease that ran out: stuck until the next request with the key takes it over. */
  readonly leaseExpired: number;
  /** The store's walk stopped at `scanLimit` before its end (Redis keys scanned, SQL rows read): the counts are a lower bound. */
  readonly truncated: boolean;
  /** The work the walk did, at most `scanLimit`: keys a Redis SCAN walked (oncely's or not), rows PostgreSQL read. */
  readonly scanned?: number;
}

export interface KeysPanel {
  readonly counts: KeyCounts;
  /** Longest-stuck first (least lease left). */
  readonly inProgress: readonly KeyRow[];
  /** Most recently completed first. */
  readonly completed: readonly KeyRow[];
  /** Most recently created first. */
  readonly released: readonly KeyRow[];
}

/** A notable engine event from the event log: takeover, fenced, leaseLost, storeError. */
export interface EventRow {
  readonly at: number;
  readonly type: string;
  /** The storage key, when the event has one. */
  readonly key: string | null;
  readonly detail: string;
}

/** How many events of each type the event log counted in one bucket (`at` is the bucket's start). */
export interface RateBucket {
  readonly at: number;
  readonly counts: Readonly<Record<string, number>>;
}

export interface EventsPanel {
  /** False when no event log was found (no app writes one): the panel says how to turn it on. */
  readonly available: boolean;
  readonly recent: readonly EventRow[];
  readonly bucketMs: number;
  /** Oldest first, one entry per bucket of the last `rateWindowMs` (zero-filled). */
  readonly rates: readonly RateBucket[];
}

export interface TopicRow {
  readonly topic: string;
  readonly pending: number;
  readonly inFlight: number;
  readonly retrying: number;
  readonly dead: number;
  /** Age of the topic's oldest pending event: its lag. 0 when none is pending. */
  readonly lagMs: number;
  readonly oldestPending: {
    readonly id: string;
    readonly key: string | null;
    readonly createdAt: number;
    readonly attempts: number;
    readonly lastError: string | null;
  } | null;
}

export interface DeadLetterRow {
  readonly id: string;
  readonly topic: string;
  readonly key: string | null;
  readonly attempts: number;
  readonly createdAt: number;
  readonly deadAt: number;
  readonly lastError: string | null;
}

/** One sample of the outbox backlog, taken by this dashboard process each time it refreshed. */
export interface BacklogSample {
  readonly at: number;
  readonly pending: number;
  readonly dead: number;
  readonly lagMs: number;
}

export interface OutboxPanel {
  readonly pending: number;
  readonly inFlight: number;
  readonly retrying: number;
  readonly published: number;
  readonly dead: number;
  readonly lagMs: number;
  readonly topics: readonly TopicRow[];
  readonly deadLetters: readonly DeadLetterRow[];
  readonly history: readonly BacklogSample[];
}

/** A message an inbox parked (it kept failing): its record, found by the inbox's parked mark. */
export interface ParkedRow {
  readonly key: string;
  readonly attempt: number;
  readonly parkedAt: number | null;
  readonly expiresAt: number;
}

export interface ParkedPanel {
  readonly count: number;
  readonly rows: readonly ParkedRow[];
  /** Found within the bounded walk only (see `KeyCounts.truncated`). */
  readonly truncated: boolean;
}

/** A panel that could not be read this time: shown as a message instead of stale numbers. */
export interface PanelError {
  readonly panel: 'keys' | 'events' | 'outbox' | 'parked';
  readonly message: string;
}

export interface Snapshot {
  readonly at: number;
  /** `kind` is the store's name (`redis`, `postgres`, `memory`, …). */
  readonly store: { readonly kind: string; readonly label: string };
  readonly refreshMs: number;
  /** Whether the operator actions are enabled (each still needs the token). */
  readonly actions: boolean;
  readonly keys: KeysPanel | null;
  readonly events: EventsPanel | null;
  /** Null when no outbox is configured or its table is missing (see `errors`). */
  readonly outbox: OutboxPanel | null;
  readonly parked: ParkedPanel | null;
  readonly errors: readonly PanelError[];
}

/** A looked-up record: everything but the body, plus the outcome's status and header names/values. */
export interface KeyDetail {
  readonly found: boolean;
  readonly key: string;
  readonly record: (KeyRow & { readonly fingerprint: string }) | null;
  readonly outcome: {
    readonly status: number;
    readonly headers: ReadonlyArray<readonly [string, string]>;
    readonly encoding: string;
    readonly storage: string;
    readonly bodyBytes: number;
  } | null;
}

/** The body of one key, asked for explicitly: the first `limit` bytes as text. */
export interface KeyBody {
  readonly key: string;
  readonly retained: boolean;
  readonly bytes: number;
  readonly truncated: boolean;
  readonly text: string;
}

/** What an action answers. */
export interface ActionResult {
  readonly ok: boolean;
  readonly message: string;
  readonly count?: number;
}
