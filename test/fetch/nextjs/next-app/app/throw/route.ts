import { suiteRoute } from '../../lib/instances';

// Throws on a key's first run: Next.js answers the 500.
export const POST = suiteRoute('throw', async (request, _context, suite) => {
  const n = await suite.bump('throw', request);
  if (n === 1) throw new Error('boom');
  return Response.json({ n }, { status: 201 });
});
