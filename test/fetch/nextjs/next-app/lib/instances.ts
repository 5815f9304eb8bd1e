/**
 * @module The app instances this server runs, one per test case (its store, its options), and the route exports
 * that serve them: each route's handler behind `withIdempotency(handler, options)` of the instance the request names
 * (`x-oncely-test-app`), made on the instance's first request to that route, as a route file's module scope would.
 */
import { randomUUID } from 'node:crypto';
import type { NextRequest } from 'next/server';
import { type FetchIdempotency, idempotency, idempotencyOf, withIdempotency } from 'oncely/fetch';
import { callBack } from './callbacks';
import { decodeOptions } from './options';
import { type OpenedStore, openStore } from './stores';
import { APP_HEADER, type AppSpec } from './wire';

/** A route's context as Next.js passes it: the dynamic segments, as a promise. */
export interface Context<Params> {
  readonly params: Promise<Params>;
}

/** The suite's route handler: the Next.js request and context, and the callbacks of the instance it runs for. */
export type SuiteHandler<Params> = (
  request: NextRequest,
  context: Context<Params>,
  suite: SuiteCalls,
) => Response | Promise<Response>;

export interface SuiteCalls {
  /** Counts a run of `route` for this request's key; resolves with how many there have been. */
  bump(route: string, request: Request): Promise<number>;
  /** Waits until the test opens `key`'s gate (saying first that it got there, when `arrive`). */
  gate(key: string, arrive: boolean): Promise<void>;
}

interface Instance {
  readonly id: string;
  readonly opened: OpenedStore;
  readonly idem: FetchIdempotency;
  readonly options: Parameters<typeof withIdempotency>[1];
  readonly routes: Map<string, (request: NextRequest, context: Context<unknown>) => Promise<Response>>;
  readonly pending: Set<Promise<unknown>>;
  readonly calls: SuiteCalls;
}

// On globalThis: every route file is a bundle entry of its own, and Next.js does not promise them one copy of a
// module they share; the instances must be one map for all of them.
const holder = globalThis as { __oncelyNextApps?: Map<string, Instance> };
holder.__oncelyNextApps ??= new Map();
const instances = holder.__oncelyNextApps;

export function createInstance(spec: AppSpec): string {
  const id = randomUUID();
  const pending = new Set<Promise<unknown>>();
  const opened = openStore(spec.store);
  const options = { ...decodeOptions(id, spec.options, pending), store: opened.store };
  const calls: SuiteCalls = {
    async bump(route, request) {
      const key = idempotencyOf(request)?.key ?? null;
      return ((await callBack('/bump', { app: id, route, key })) as { n: number }).n;
    },
    gate: async (key, arrive) => void (await callBack('/gate', { app: id, key, arrive })),
  };
  instances.set(id, { id, opened, idem: idempotency(options), options, routes: new Map(), pending, calls });
  return id;
}

export async function closeInstance(id: string): Promise<boolean> {
  const instance = instances.get(id);
  if (instance === undefined) return false;
  instances.delete(id);
  await instance.opened.close();
  return true;
}

/** A route export: `handler` behind `withIdempotency` with the options of the instance the request names. */
export function suiteRoute<Params>(name: string, handler: SuiteHandler<Params>) {
  return async (request: NextRequest, context: Context<Params>): Promise<Response> => {
    const instance = instanceOf(request);
    if (instance === undefined) return noInstance();
    let route = instance.routes.get(name);
    if (route === undefined) {
      route = withIdempotency(
        (request: NextRequest, context: Context<unknown>) =>
          handler(request, context as Context<Params>, instance.calls),
        instance.options,
      );
      instance.routes.set(name, route);
    }
    const response = await route(request, context);
    await Promise.all(instance.pending);
    return response;
  };
}

/** The status route of long-running requests, on the instance's layer. */
export function statusRoute() {
  return async (request: NextRequest): Promise<Response> => {
    const instance = instanceOf(request);
    return instance === undefined ? noInstance() : instance.idem.status(request);
  };
}

function instanceOf(request: Request): Instance | undefined {
  const id = request.headers.get(APP_HEADER);
  return id === null ? undefined : instances.get(id);
}

function noInstance(): Response {
  return Response.json(
    { error: `no app instance: send ${APP_HEADER} with an id from POST /harness/apps` },
    { status: 400 },
  );
}
