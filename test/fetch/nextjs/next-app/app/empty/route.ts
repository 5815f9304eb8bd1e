import { suiteRoute } from '../../lib/instances';

export const POST = suiteRoute('empty', async (request, _context, suite) => {
  await suite.bump('empty', request);
  return new Response(null, { status: 204 });
});
