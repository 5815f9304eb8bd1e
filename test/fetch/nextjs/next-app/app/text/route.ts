import { suiteRoute } from '../../lib/instances';

export const POST = suiteRoute(
  'text',
  async (request, _context, suite) => new Response(`hello ${await suite.bump('text', request)}`),
);
