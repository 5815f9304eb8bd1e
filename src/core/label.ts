/**
 * @module A record's label: the short name of what its key belongs to (`POST /payments/:id`, `fn:charge`,
 * `inbox:ledger`), kept with the record from its first claim so an operator can tell one hashed key from another.
 * Bounded and free of control characters, so every store keeps it as it is and a terminal or a page shows it
 * without escape sequences, line breaks or reordered text. Never the client's key or identity: callers pass the
 * low-cardinality scope name they already give spans and metrics.
 */

import { InvalidOptionsError } from './errors.js';

/** Longest label kept, in UTF-16 code units (JavaScript `length`): at most 600 bytes of UTF-8. */
export const MAX_LABEL_LENGTH = 200;

/**
 * C0 and C1 controls and DEL, the Unicode line and paragraph separators, and the bidirectional overrides and
 * isolates (which make a terminal or a page show text in another order than it is stored).
 */
function unsafe(code: number): boolean {
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x2028 ||
    code === 0x2029 ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

/** True when `text` may be stored as a label as it is: 1 to `MAX_LABEL_LENGTH` characters, none of them unsafe. */
export function isLabel(text: string): boolean {
  if (text.length === 0 || text.length > MAX_LABEL_LENGTH) return false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdfff) {
      // Half a surrogate pair has no UTF-8 form: a store would keep U+FFFD instead, and read back another label.
      const next = text.charCodeAt(i + 1);
      if (code > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) return false;
      i++;
    } else if (unsafe(code)) return false;
  }
  return true;
}

/**
 * The label a store is given for a scope name: the name itself when it is one (nearly always, and then no string
 * is made), otherwise the name with each unsafe character replaced by U+FFFD and cut to `MAX_LABEL_LENGTH` with
 * a trailing `…`. A label only names a key for people, so a scope name that makes a poor one never fails the call.
 */
export function labelOf(scope: string | undefined): string | undefined {
  if (scope === undefined || scope === '') return undefined;
  if (isLabel(scope)) return scope;
  const cut = scope.length > MAX_LABEL_LENGTH;
  const room = cut ? MAX_LABEL_LENGTH - 1 : MAX_LABEL_LENGTH;
  let text = '';
  // By code point, so a pair is kept or cut whole; a lone half of one is replaced like a control character.
  for (const char of scope) {
    if (text.length + char.length > room) break;
    const code = char.charCodeAt(0);
    text += unsafe(code) || (char.length === 1 && code >= 0xd800 && code <= 0xdfff) ? '\uFFFD' : char;
  }
  return cut ? `${text}…` : text;
}

/**
 * A store's check of `BeginInput.label` before it is written: the engine only ever passes labels made by
 * `labelOf`, so this refuses only a direct caller's bad one, before it could reach a record layout or a column.
 */
export function checkLabel(label: string | undefined, store: string): void {
  if (label !== undefined && !isLabel(label)) {
    throw new InvalidOptionsError(
      `${store} store: a label is 1 to ${MAX_LABEL_LENGTH} characters without control characters`,
    );
  }
}
