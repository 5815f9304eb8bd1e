import { idempotencyOf } from 'oncely/fetch';
import { suiteRoute } from '../../lib/instances';

// 202 at once; the work waits for the key's gate, then its answer is stored.
export const POST = suiteRoute('defer', async (request, _context, suite) => {
  const context = idempotencyOf(request)!;
  const n = await suite.bump('defer', request);
  return context.defer(async () => {
    await suite.gate(context.key, false);
    return { status: 201, json: { n } };
  });
});
