/**
 * @module What `oncely/fetch` promises a handler's types, checked by the type-check of the tree (tsc over test/);
 * at run time the assertions are no-ops and the handlers are never called.
 */
import { MemoryStore } from 'oncely';
import {
  type FetchIdempotency,
  type IdempotencyContext,
  idempotency,
  idempotencyOf,
  withIdempotency,
} from 'oncely/fetch';
import { describe, expectTypeOf, it } from 'vitest';

const store = new MemoryStore();

/** A framework's Request subclass, as Next.js's NextRequest. */
class FrameworkRequest extends Request {
  get nextUrl(): URL {
    return new URL(this.url);
  }
}
type RouteContext = { params: Promise<{ id: string }> };

describe('oncely/fetch types', () => {
  it("withIdempotency keeps the handler's signature: its Request type and every argument after it", () => {
    const handler = withIdempotency(
      async (request: FrameworkRequest, context: RouteContext) => {
        expectTypeOf(request.nextUrl).toEqualTypeOf<URL>();
        expectTypeOf(context.params).toEqualTypeOf<Promise<{ id: string }>>();
        return new Response(null, { status: 204 });
      },
      { store },
    );
    expectTypeOf(handler).toEqualTypeOf<
      (request: FrameworkRequest, context: RouteContext) => Promise<Response>
    >();
    // A synchronous handler is wrapped too; the wrapper is always async.
    expectTypeOf(withIdempotency(() => new Response('ok'), { store })).returns.toEqualTypeOf<
      Promise<Response>
    >();
  });

  it('idempotencyOf gives the context or undefined; defer returns the Response to send', () => {
    expectTypeOf(idempotencyOf).parameter(0).toEqualTypeOf<Request>();
    expectTypeOf(idempotencyOf).returns.toEqualTypeOf<IdempotencyContext<Response> | undefined>();
    expectTypeOf<IdempotencyContext<Response>['defer']>().returns.toEqualTypeOf<Response>();
  });

  it("the middleware's next gets the same Request type; status answers a Response", () => {
    const idem: FetchIdempotency = idempotency({ store, scope: (request) => request.url });
    const answer = idem(new FrameworkRequest('http://x/'), (request) => {
      expectTypeOf(request).toEqualTypeOf<FrameworkRequest>();
      return new Response('ok');
    });
    expectTypeOf(answer).toEqualTypeOf<Promise<Response>>();
    expectTypeOf(idem.status).parameter(0).toEqualTypeOf<string | Request>();
    expectTypeOf(idem.status).returns.toEqualTypeOf<Promise<Response>>();
  });

  it('the user functions of the options get the Request', () => {
    idempotency({
      store,
      scope: (request) => {
        expectTypeOf(request).toEqualTypeOf<Request>();
        return '';
      },
      key: (request, body) => {
        expectTypeOf(request).toEqualTypeOf<Request>();
        expectTypeOf(body).toBeUnknown();
        return undefined;
      },
      route: (request) => new URL(request.url).pathname,
    });
  });
});
