import { randomUUID } from 'node:crypto';
import { suiteRoute } from '../../lib/instances';

// 201 JSON { id, n, body }, x-handler: yes, cache-control: private, two cookies.
export const POST = suiteRoute('payments', async (request, _context, suite) => {
  const n = await suite.bump('payments', request);
  const text = await request.text();
  const headers = new Headers({ 'x-handler': 'yes', 'cache-control': 'private' });
  headers.append('set-cookie', 'session=abc; Path=/');
  headers.append('set-cookie', 'theme=dark; Path=/');
  headers.set('content-type', 'application/json');
  const parsed =
    request.headers.get('content-type')?.includes('json') && text !== '' ? JSON.parse(text) : text;
  return new Response(JSON.stringify({ id: randomUUID(), n, body: parsed }), { status: 201, headers });
});

// A safe method behind the same wrapper: passed through, with no idempotency context (so no key is counted).
export const GET = suiteRoute('get-payments', async (request, _context, suite) =>
  Response.json({ n: await suite.bump('get-payments', request) }),
);
