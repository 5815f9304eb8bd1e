import { suiteRoute } from '../../lib/instances';

export const POST = suiteRoute('fail-once', async (request, _context, suite) => {
  const n = await suite.bump('fail-once', request);
  return Response.json({ n }, { status: n === 1 ? 500 : 201 });
});
