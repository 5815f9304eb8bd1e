// This file's declarations use Node's types (Buffer, node:*): the directive, kept in its .d.ts, loads @types/node
// for users whose tsconfig does not list it (TypeScript 6+ includes no @types by default). See docs/install.md.
/// <reference types="node" preserve="true" />
import type { IncomingMessage } from 'node:http';
import { headerLines } from './key-header.js';
import type { RequestView } from './scope.js';

/** A `RequestView` over a Node request; `route` when the caller knows the matched route template. */
export function nodeView<Req extends IncomingMessage>(
  request: Req,
  route: string | undefined,
  target: string,
  bodyBytes: Uint8Array | undefined,
  parsedBody: unknown,
): RequestView<Req> {
  return new NodeRequestView(request, route, target, bodyBytes, parsedBody);
}

// A class rather than an object literal with two closures: one object per request.
class NodeRequestView<Req extends IncomingMessage> implements RequestView<Req> {
  readonly method: string;

  constructor(
    readonly request: Req,
    readonly route: string | undefined,
    readonly target: string,
    readonly bodyBytes: Uint8Array | undefined,
    readonly parsedBody: unknown,
  ) {
    this.method = request.method ?? 'GET';
  }

  header(name: string): string | undefined {
    const value = this.request.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  }

  repeated(name: string): boolean {
    return headerLines(this.request.rawHeaders, name) > 1;
  }
}

/** True when the declared media type is JSON (`application/json`, `application/problem+json`, …). */
export function isJsonMediaType(contentType: string | undefined | null): boolean {
  if (!contentType) return false;
  const semicolon = contentType.indexOf(';');
  const type = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/** The body parsed, when it is declared JSON; `unparseable` when it is declared JSON and does not parse. */
export type JsonBody = { readonly value: unknown; readonly text: string } | 'unparseable' | undefined;

/** Parses a body declared JSON once, so the layer can refuse a broken one before any record exists. */
export function parseJsonBody(contentType: string | undefined | null, bytes: Uint8Array): JsonBody {
  if (bytes.byteLength === 0 || !isJsonMediaType(contentType)) return undefined;
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  try {
    return { value: JSON.parse(text), text };
  } catch {
    return 'unparseable';
  }
}

/** Reads a request body up to `limit` bytes; undefined when it is larger (the rest is drained, not kept). */
export function readBody(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    if (Number(request.headers['content-length']) > limit) {
      request.resume();
      return resolve(undefined);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size <= limit) return void chunks.push(chunk);
      cleanup();
      request.resume();
      resolve(undefined);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const cleanup = () => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
    };
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
  });
}
