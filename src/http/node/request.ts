/**
 * @module The flow's `RequestView` over a Node `IncomingMessage` (node:http, Express, Nest on Express): the headers
 * read from Node's map, repeated lines told apart by `rawHeaders`.
 */
// This file's declarations use Node's types (Buffer, node:*): the directive, kept in its .d.ts, loads @types/node
// for users whose tsconfig does not list it (TypeScript 6+ includes no @types by default). See docs/install.md.
/// <reference types="node" preserve="true" />
import type { IncomingMessage } from 'node:http';
import { headerLines } from '../key-header.js';
import type { RequestView } from '../scope.js';

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
