import { idempotencyOf } from 'oncely/fetch';
import { suiteRoute } from '../../lib/instances';

export const POST = suiteRoute('skip', async (request, _context, suite) => {
  const n = await suite.bump('skip', request);
  idempotencyOf(request)?.skipStorage();
  return Response.json({ n }, { status: 201 });
});
