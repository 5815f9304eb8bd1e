// The Next.js 16 app test/fetch/nextjs.test.ts builds and serves: the HTTP suite's routes as route handlers behind
// withIdempotency (app/, lib/), a proxy that sets CORS and a request id (proxy.ts), and the route file the docs
// page shows (app/orders/[id]/pay). Next.js's defaults otherwise, type check included.
import type { NextConfig } from 'next';

const config: NextConfig = {
  experimental: {
    // Each test run builds a fresh copy once: a cache for the next build would only cost time to write.
    turbopackFileSystemCacheForBuild: false,
  },
};

export default config;
