/**
 * @module Everything the engine does, as typed events through one hook (`onEvent`). `key` is always the hashed storage
 * key, never the client's raw key, so events can go to logs as they are.
 */
export type OncelyEvent =
  | { readonly type: 'acquired'; readonly key: string; readonly token: number; readonly attempt: number }
  | { readonly type: 'takeover'; readonly key: string; readonly token: number; readonly attempt: number }
  | { readonly type: 'replayed'; readonly key: string }
  | { readonly type: 'conflict'; readonly key: string; readonly retryAfterMs: number }
  | { readonly type: 'mismatch'; readonly key: string }
  | { readonly type: 'completed'; readonly key: string; readonly token: number }
  | {
      readonly type: 'released';
      readonly key: string;
      readonly token: number;
      readonly reason: ReleaseReason;
    }
  | {
      readonly type: 'fenced';
      readonly key: string;
      readonly token: number;
      readonly operation: FencedOperation;
    }
  | { readonly type: 'leaseLost'; readonly key: string; readonly token: number }
  | { readonly type: 'storeError'; readonly operation: string; readonly error: unknown };

export type OncelyEventType = OncelyEvent['type'];
/**
 * Why a claim let its key go: the code threw (`error`), its result was not to be kept (`notKept`), the claim was
 * disposed unsettled (`disposed`), or a `begin` answered after its caller had given up (`late`).
 */
export type ReleaseReason = 'error' | 'notKept' | 'disposed' | 'late';
export type FencedOperation = 'complete' | 'release' | 'renew';
export type EventHandler = (event: OncelyEvent) => void;
