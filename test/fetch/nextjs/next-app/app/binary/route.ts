import { suiteRoute } from '../../lib/instances';

// Bytes 0..255, then n.
export const POST = suiteRoute('binary', async (request, _context, suite) => {
  const n = await suite.bump('binary', request);
  const bytes = new Uint8Array(257);
  for (let index = 0; index < 256; index++) bytes[index] = index;
  bytes[256] = n;
  return new Response(bytes, { headers: { 'content-type': 'application/octet-stream' } });
});
