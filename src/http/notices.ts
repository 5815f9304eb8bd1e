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

/**
 * The things one factory says to its logger: each topic once, however many requests meet it. Per factory, so two
 * middlewares (two APIs in one process) each say theirs.
 */
export class Notices {
  readonly #said = new Set<string>();

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
}
