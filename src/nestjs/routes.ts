/**
 * @module The registry behind the Nest layer: the engine and each decorated handler's resolved options, checked when
 * the application initializes, so bad options fail `app.init()` rather than a request.
 */
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { InvalidOptionsError, isInvalidOptionsError } from '../core/errors.js';
import { HttpIdempotency } from '../http/flow.js';
import {
  checkOptionNames,
  createShared,
  type ResolvedRoute,
  resolveRoute,
  type Shared,
} from '../http/options.js';
import type { NestRequest } from './exchange.js';
import {
  ONCELY_OPTIONS,
  type OncelyModuleOptions,
  ROUTE_METADATA,
  type RouteMetadata,
  STATUS_METADATA,
} from './metadata.js';

/** What the interceptor does with a handler's requests. */
export type RouteEntry =
  | {
      readonly kind: 'idempotent';
      readonly flow: HttpIdempotency<NestRequest>;
      /**
       * The handler takes `@Res()` or `@Next()` without `passthrough`: Nest sends nothing for it, so an answer of
       * the layer (a replay, a 409) is written by the layer itself instead of in place of what Nest sends.
       */
      readonly answersItself: boolean;
    }
  | { readonly kind: 'status'; readonly route: ResolvedRoute<NestRequest>; readonly answersItself: boolean };

type Handler = (...args: never[]) => unknown;

// Nest's own metadata keys and parameter types (stable since Nest 5; `@nestjs/common` exports them from
// `/internal` since 12, from its root before): which handlers take the response object themselves.
const ROUTE_ARGS_METADATA = '__routeArguments__';
const RESPONSE_PASSTHROUGH_METADATA = '__responsePassthrough__';
const RESPONSE_PARAM = '1';
const NEXT_PARAM = '2';

/**
 * The engine and every decorated handler's resolved route options, one per application. The module's options
 * are checked when it is created and each handler's when the application initializes (`onModuleInit`), so bad
 * options fail `app.init()` (or `NestFactory.create`), never a request.
 */
export class OncelyRoutes implements OnModuleInit {
  readonly shared: Shared;
  readonly base: ResolvedRoute<NestRequest>;
  readonly #entries = new Map<Handler, RouteEntry | undefined>();
  readonly #discovery: DiscoveryService;
  readonly #reflector: Reflector;
  readonly #scanner = new MetadataScanner();

  constructor(options: OncelyModuleOptions, discovery: DiscoveryService, reflector: Reflector) {
    checkOptionNames('nestjs', options);
    this.shared = createShared('nestjs', options);
    this.base = resolveRoute('nestjs', options, this.shared.engine, this.shared.scopeNotices);
    this.#discovery = discovery;
    this.#reflector = reflector;
  }

  onModuleInit(): void {
    for (const wrapper of this.#discovery.getControllers()) {
      const controller = wrapper.metatype;
      if (typeof controller !== 'function') continue;
      const prototype = controller.prototype as Record<string, unknown>;
      for (const name of this.#scanner.getAllMethodNames(prototype)) {
        const handler = prototype[name];
        if (typeof handler === 'function') this.#resolve(controller, handler as Handler, name);
      }
    }
  }

  /**
   * The entry of a handler, undefined when it is not the layer's business. Resolved at init; a handler found only
   * now (a controller the discovery did not list) is resolved on its first request.
   */
  entryFor(controller: abstract new (...args: never[]) => unknown, handler: Handler): RouteEntry | undefined {
    if (this.#entries.has(handler)) return this.#entries.get(handler);
    return this.#resolve(controller, handler, handler.name);
  }

  #resolve(controller: object, handler: Handler, name: string): RouteEntry | undefined {
    const answersItself = takesResponse(controller, name);
    let entry: RouteEntry | undefined;
    const status = this.#reflector.get<RouteMetadata | undefined>(STATUS_METADATA, handler);
    const onClass = this.#reflector.get<RouteMetadata | undefined>(ROUTE_METADATA, controller as Handler);
    const onHandler = this.#reflector.get<RouteMetadata | undefined>(ROUTE_METADATA, handler);
    try {
      if (status !== undefined) {
        entry = { kind: 'status', route: resolveRoute('nestjs', status, this.base), answersItself };
      } else if (onClass !== undefined || onHandler !== undefined) {
        // The handler's options over the controller's, each over the module's.
        const route = resolveRoute('nestjs', { ...onClass, ...onHandler }, this.base);
        entry = { kind: 'idempotent', flow: new HttpIdempotency(this.shared, route), answersItself };
      }
    } catch (error) {
      if (!isInvalidOptionsError(error)) throw error;
      // Which handler: the module's options are fine, or the module would not have been created.
      const where = `${(controller as { name?: string }).name ?? 'controller'}.${name}`;
      throw new InvalidOptionsError(`@Idempotent on ${where}: ${error.message}`);
    }
    this.#entries.set(handler, entry);
    return entry;
  }
}

/** True when Nest leaves the response to the handler: it takes `@Res()` or `@Next()`, without `passthrough`. */
function takesResponse(controller: object, name: string): boolean {
  const reflect = Reflect as unknown as {
    getMetadata?(key: string, target: object, property: string): unknown;
  };
  const args = reflect.getMetadata?.(ROUTE_ARGS_METADATA, controller, name);
  if (args === null || typeof args !== 'object') return false;
  const takes = Object.keys(args).some((key) => {
    const type = key.split(':')[0];
    return type === RESPONSE_PARAM || type === NEXT_PARAM;
  });
  return takes && reflect.getMetadata?.(RESPONSE_PASSTHROUGH_METADATA, controller, name) !== true;
}

// Nest's dependency injection without decorator syntax (so the package compiles without experimentalDecorators):
// the same metadata @Injectable() and @Inject() would write.
Injectable()(OncelyRoutes);
Inject(ONCELY_OPTIONS)(OncelyRoutes, undefined, 0);
Inject(DiscoveryService)(OncelyRoutes, undefined, 1);
Inject(Reflector)(OncelyRoutes, undefined, 2);
