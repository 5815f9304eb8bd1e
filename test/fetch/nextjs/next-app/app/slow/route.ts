import { randomUUID } from 'node:crypto';
import { idempotencyOf } from 'oncely/fetch';
import { suiteRoute } from '../../lib/instances';

// Waits at the key's gate until the test opens it.
export const POST = suiteRoute('slow', async (request, _context, suite) => {
  const n = await suite.bump('slow', request);
  await suite.gate(idempotencyOf(request)!.key, true);
  return Response.json({ n, id: randomUUID() }, { status: 201 });
});
