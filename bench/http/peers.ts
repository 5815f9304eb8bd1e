// The npm peers measured beside oncely, each with its Redis adapter, on Express. express-idempotency is a
// middleware already; @node-idempotency/core is framework-free, so this file holds the small Express glue its
// NestJS plugin would otherwise provide (store the response, then send it: the order that favours it).
import type { NextFunction, Request, Response } from 'express';

type Middleware = (req: Request, res: Response, next: NextFunction) => unknown;

interface ExpressIdempotencyModule {
  idempotency(options: { dataAdapter: unknown }): Middleware;
  getSharedIdempotencyService(): { isHit(req: Request): boolean };
}
interface RedisAdapterClass {
  new (options: { connectionConfig: { url: string } }): { connect(): Promise<void> };
}
interface NodeIdempotencyCore {
  Idempotency: new (
    storage: unknown,
    options: Record<string, unknown>,
  ) => {
    onRequest(
      request: Record<string, unknown>,
    ): Promise<{ body?: unknown; additional?: { status?: number } } | undefined>;
    onResponse(request: Record<string, unknown>, response: Record<string, unknown>): Promise<void>;
  };
}

let expressIdempotency: ExpressIdempotencyModule | undefined;

export const peerMiddleware = {
  /** express-idempotency asks the handler to skip replays itself (`isHit`). */
  isHit(req: Request): boolean {
    return expressIdempotency?.getSharedIdempotencyService().isHit(req) ?? false;
  },

  async create(peer: 'express-idempotency' | 'node-idempotency', redisPort: number): Promise<Middleware> {
    const url = `redis://127.0.0.1:${redisPort}`;
    if (peer === 'express-idempotency') {
      expressIdempotency = (await import('express-idempotency')) as unknown as ExpressIdempotencyModule;
      const adapterModule = (await import('express-idempotency-redis-adapter')) as unknown as {
        default: RedisAdapterClass | { default: RedisAdapterClass };
      };
      const RedisAdapter =
        'default' in adapterModule.default ? adapterModule.default.default : adapterModule.default;
      const dataAdapter = new RedisAdapter({ connectionConfig: { url } });
      await dataAdapter.connect();
      return expressIdempotency.idempotency({ dataAdapter });
    }
    const core = (await import('@node-idempotency/core')) as unknown as NodeIdempotencyCore;
    const { RedisStorageAdapter } = (await import('@node-idempotency/storage-adapter-redis')) as unknown as {
      RedisStorageAdapter: new (options: { url: string }) => { connect(): Promise<void> };
    };
    const storage = new RedisStorageAdapter({ url });
    await storage.connect();
    const idempotency = new core.Idempotency(storage, { enforceIdempotency: true, cacheTTLMS: 600_000 });
    return async function nodeIdempotencyGlue(req, res, next) {
      const request = { headers: req.headers, path: req.path, method: req.method, body: req.body };
      try {
        const cached = await idempotency.onRequest(request);
        if (cached !== undefined) {
          res
            .status(cached.additional?.status ?? 200)
            .type('application/json')
            .send(cached.body);
          return;
        }
      } catch (error) {
        const code = (error as { code?: string }).code;
        const status =
          code === 'REQUEST_IN_PROGRESS' ? 409 : code === 'IDEMPOTENCY_FINGERPRINT_MISSMATCH' ? 422 : 400;
        res.status(status).json({ error: code });
        return;
      }
      const send = res.send.bind(res);
      res.send = (body: unknown) => {
        idempotency
          .onResponse(request, { body, additional: { status: res.statusCode } })
          .then(() => send(body), next);
        return res;
      };
      next();
    };
  },
};
