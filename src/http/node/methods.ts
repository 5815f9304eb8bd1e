/**
 * @module How the capture sits on a Node `ServerResponse`: its write methods swapped for ones that hand every write
 * to the response's capture while it has one, and write for real otherwise. The capture itself is `capture.ts`.
 */
// This file's declarations use Node's types (node:http): the directive, kept in its .d.ts, loads @types/node for
// users whose tsconfig does not list it (TypeScript 6+ includes no @types by default). See docs/install.md.
/// <reference types="node" preserve="true" />
import { ServerResponse } from 'node:http';

/** The methods every write of a `ServerResponse` goes through (`res.json`, `res.send`, pipes, Nest's replies). */
export const METHODS = ['writeHead', 'write', 'end', 'flushHeaders'] as const;
type Method = (typeof METHODS)[number];
export type AnyMethod = (...args: unknown[]) => unknown;
/** The response's own methods, below the capture's: what it sends through once it lets the response go. */
export type Methods = Readonly<Record<Method, AnyMethod>>;

type Chunk = string | Uint8Array;

/** What the swapped-in methods hand a captured response's writes to. */
export interface Capturing {
  writeHead(status: number, reason: unknown, headers: unknown): ServerResponse;
  write(chunk: Chunk, encoding: unknown, callback: unknown): boolean;
  end(chunk: unknown, encoding: unknown, callback: unknown): ServerResponse;
  flushHeaders(): undefined;
}

// The capture of a response rides on the response itself: a WeakMap lookup on each write, and the WeakMap's
// entries for the GC to process, measured a few microseconds per request.
const CAPTURE = Symbol('oncely.capture');
interface Capturable {
  [CAPTURE]?: Capturing | undefined;
}
const captureOf = (res: object): Capturing | undefined => (res as Capturable)[CAPTURE];

/**
 * From now on the writes of `res` go to `capturing`: the capturing methods are swapped in (see `swapMethods`) and
 * the capture set, in one call. Returns the methods below the capture, which write for real.
 */
export function captureWrites(res: ServerResponse, capturing: Capturing): Methods {
  const below = swapMethods(res);
  setCapture(res, capturing);
  return below;
}

/**
 * Swaps the capturing methods in on `res` and returns the methods below them. How depends on the response, by
 * measurement: a framework's response whose prototype was already switched per request (Express) gets a derived
 * prototype (made once per original prototype), because own properties on such an object cost tens of
 * microseconds; a plain `ServerResponse` gets own properties, because switching its prototype slows Node's own
 * http code on it. When something before us already put its own `end` or `write` on the instance (compression
 * middleware does), those are wrapped on the instance, so their work still happens, after the capture.
 */
function swapMethods(res: ServerResponse): Methods {
  const proto = Object.getPrototypeOf(res) as object;
  const ownMethods = METHODS.some((name) => Object.hasOwn(res, name));
  if (proto === ServerResponse.prototype && !ownMethods) return plainInstance(res);
  if (proto === ServerResponse.prototype || ownMethods) return wrapInstance(res);
  Object.setPrototypeOf(res, derivedPrototype(proto));
  return proto as Methods;
}

/** From now on the response's writes go to `capturing` (undefined: they write for real again). */
export function setCapture(res: ServerResponse, capturing: Capturing | undefined): void {
  (res as Capturable)[CAPTURE] = capturing;
}
const derived = new WeakMap<object, object>();

/** Methods that capture while the response has a capture, and pass through to `next` otherwise. */
function capturingMethods(next: (res: object, name: Method) => AnyMethod): Record<Method, AnyMethod> {
  return {
    writeHead(this: ServerResponse, ...args: unknown[]) {
      const state = captureOf(this);
      return state
        ? state.writeHead(args[0] as number, args[1], args[2])
        : next(this, 'writeHead').apply(this, args);
    },
    write(this: ServerResponse, ...args: unknown[]) {
      const state = captureOf(this);
      return state ? state.write(args[0] as Chunk, args[1], args[2]) : next(this, 'write').apply(this, args);
    },
    end(this: ServerResponse, ...args: unknown[]) {
      const state = captureOf(this);
      return state ? state.end(args[0], args[1], args[2]) : next(this, 'end').apply(this, args);
    },
    flushHeaders(this: ServerResponse, ...args: unknown[]) {
      const state = captureOf(this);
      return state ? state.flushHeaders() : next(this, 'flushHeaders').apply(this, args);
    },
  };
}

function derivedPrototype(proto: object): object {
  let prototype = derived.get(proto);
  if (prototype === undefined) {
    const methods = capturingMethods((_res, name) => (proto as Record<Method, AnyMethod>)[name]);
    prototype = Object.create(proto, {
      writeHead: { value: methods.writeHead, writable: true, configurable: true },
      write: { value: methods.write, writable: true, configurable: true },
      end: { value: methods.end, writable: true, configurable: true },
      flushHeaders: { value: methods.flushHeaders, writable: true, configurable: true },
    }) as object;
    derived.set(proto, prototype);
    // The derived prototype chains to the original, which keeps it alive as long as any response uses it.
  }
  return prototype;
}

const plainMethods = ServerResponse.prototype as unknown as Methods;
// For a plain ServerResponse the methods below are always the prototype's: one set of wrappers serves every
// response, instead of four closures made per request.
let plainCapturing: Record<Method, AnyMethod> | undefined;

/** A plain `ServerResponse` gets the shared capturing methods as own properties. */
function plainInstance(res: ServerResponse): Methods {
  plainCapturing ??= capturingMethods((_res, name) => plainMethods[name]);
  const target = res as unknown as Record<Method, AnyMethod>;
  for (const name of METHODS) target[name] = plainCapturing[name];
  return plainMethods;
}

/** The slow path, for responses whose instance already carries its own methods: wrap those in place. */
function wrapInstance(res: ServerResponse): Methods {
  const target = res as unknown as Record<Method, AnyMethod>;
  const originals = {
    writeHead: target.writeHead,
    write: target.write,
    end: target.end,
    flushHeaders: target.flushHeaders,
  };
  const methods = capturingMethods((_res, name) => originals[name]);
  for (const name of METHODS) target[name] = methods[name];
  return originals;
}
