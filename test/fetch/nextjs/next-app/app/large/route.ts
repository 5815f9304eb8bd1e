import { suiteRoute } from '../../lib/instances';

// About 8 KB: over the suite's response cap (maxBodyBytes 4096).
export const POST = suiteRoute('large', async (request, _context, suite) =>
  Response.json({ n: await suite.bump('large', request), pad: 'x'.repeat(8000) }, { status: 201 }),
);
