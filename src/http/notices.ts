/**
 * @module What the layer tells an operator through its `logger`: each topic once, and why the store fails once per
 * cause and minute, with the fix where there is one.
 */
import { InvalidOptionsError } from '../core/errors.js';

/** Where the layer tells an operator what needs their attention. `console` fits; so does a pino or winston logger. */
export interface Logger {
  warn(message: string): void;
}

/** The `logger` option: a logger, or `false` for silence. Default `console`. */
export type LoggerOption = Logger | false;

/** Checks the `logger` option once, at construction. */
export function resolveLogger(option: unknown): Logger | undefined {
  if (option === undefined) return console;
  if (option === false) return undefined;
  if (option === null || typeof option !== 'object' || typeof (option as Logger).warn !== 'function')
    throw new InvalidOptionsError('logger must be an object with a warn(message) method, or false');
  const logger = option as Logger;
  return {
    warn(message) {
      try {
        logger.warn(message);
      } catch {
        // A logger that throws must never fail a request.
      }
    },
  };
}

/** How often one cause of store failures is reported again while it lasts. */
export const STORE_FAILURE_REPORT_MS = 60_000;
// Causes remembered at most; past this the memory starts over (a store failing in ever new ways is rare).
const MAX_CAUSES = 100;

/** SQLSTATEs whose fix is to create the store's table; the PostgreSQL store's message usually says it already. */
const MIGRATE_STATES = new Set(['42P01', '3F000', '42703']);

interface Reported {
  at: number;
  since: number;
}

/**
 * The things one factory says to its logger: each topic once, and each cause of store failures once a minute
 * while it lasts, however many requests meet them. Per factory, so two middlewares each say theirs.
 */
export class Notices {
  readonly #said = new Set<string>();
  readonly #failures = new Map<string, Reported>();

  constructor(
    readonly adapter: string,
    readonly logger: Logger | undefined,
  ) {}

  /** Says `message` (prefixed with the adapter) the first time `topic` comes up; nothing after that. */
  once(topic: string, message: () => string): void {
    if (this.logger === undefined || this.#said.has(topic)) return;
    this.#said.add(topic);
    this.logger.warn(`oncely/${this.adapter}: ${message()}`);
  }

  /**
   * A store call failed (the engine's `storeError` event): says why, once per cause (a SQLSTATE, the driver's error
   * code, a timeout) and again at most every `STORE_FAILURE_REPORT_MS` while it lasts, with how many failures
   * were not reported in between. The fix goes with it where there is one (`oncely migrate` for a missing table).
   */
  storeFailed(error: unknown, now = Date.now()): void {
    if (this.logger === undefined) return;
    const cause = causeOf(error);
    const seen = this.#failures.get(cause.key);
    if (seen !== undefined && now - seen.at < STORE_FAILURE_REPORT_MS) {
      seen.since++;
      return;
    }
    if (seen === undefined && this.#failures.size >= MAX_CAUSES) this.#failures.clear();
    this.#failures.set(cause.key, { at: now, since: 0 });
    const more =
      seen !== undefined && seen.since > 0
        ? ` (${seen.since} more failures of this kind since the last report)`
        : '';
    this.logger.warn(
      `oncely/${this.adapter}: the idempotency store failed: ${sentence(`${cause.message}${cause.hint}`)} Requests that need it are answered 503 store-unavailable until it recovers${more}. Reported once a minute per cause.`,
    );
  }
}

/** Ends a sentence once: a hint that asks a question, or a driver message ending in `!` or `?`, takes no period. */
function sentence(text: string): string {
  return /[.?!]$/.test(text) ? text : `${text}.`;
}

/** Messages of a store that cannot be reached, whatever the driver's words (refused, reset, reconnecting, …). */
const CONNECTION =
  /ECONNREFUSED|ECONNRESET|ENOTFOUND|EHOSTUNREACH|EPIPE|connect|connection|socket|max retries|closed|terminated/i;

/** What a store failure is about: a stable key to count it by, its message, and the fix where one is known. */
function causeOf(error: unknown): { key: string; message: string; hint: string } {
  const message = (error instanceof Error ? error.message : String(error)).replace(/\.+$/, '');
  const driver = error instanceof Error ? (error as { cause?: unknown }).cause : undefined;
  const code = codeOf(driver) ?? codeOf(error);
  if (code !== undefined && MIGRATE_STATES.has(code)) {
    const hint = message.includes('migrate')
      ? ''
      : '; the table is missing or from another version: run `oncely migrate` (or store.migrate())';
    return { key: code, message, hint };
  }
  if (message.includes('timed out'))
    return { key: 'timeout', message, hint: '; the store answered slower than storeTimeoutMs' };
  // A driver says "refused", then "reconnecting", then "max retries": one cause for whoever reads the log.
  if ((code !== undefined && /^E[A-Z]+$/.test(code)) || CONNECTION.test(message))
    return {
      key: 'connection',
      message,
      hint: '; the store cannot be reached: is it running, and is its address right?',
    };
  // Otherwise the SQLSTATE or error code, or the message without its numbers (ports, ms, counts).
  return { key: code ?? message.replace(/\d+/g, '#').slice(0, 200), message, hint: '' };
}

function codeOf(error: unknown): string | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const code = (error as { code?: unknown }).code;
  // oncely's own codes (ONCELY_STORE_UNAVAILABLE) say nothing about the cause.
  return typeof code === 'string' && !code.startsWith('ONCELY_') ? code : undefined;
}
