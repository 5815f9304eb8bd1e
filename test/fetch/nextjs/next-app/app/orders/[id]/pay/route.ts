// The route file as docs/adapters/nextjs.md writes one: the store made in module scope, the handler behind
// withIdempotency, the route template as the scope's route (so every order's path shares one template).
import { Redis } from 'ioredis';
import { idempotencyOf, withIdempotency } from 'oncely/fetch';
import { RedisStore } from 'oncely/redis';

const client = new Redis(process.env.REDIS_URL!, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
client.on('error', (error) => console.error('redis:', error.message));
const store = new RedisStore({ client, prefix: process.env.ONCELY_ORDERS_PREFIX ?? 'orders' });

export const POST = withIdempotency(
  async (request: Request, { params }: { params: Promise<{ id: string }> }) => {
    const { id } = await params;
    return Response.json({ order: id, attempt: idempotencyOf(request)?.attempt }, { status: 201 });
  },
  { store, route: '/orders/[id]/pay', logger: false },
);
