import { suiteRoute } from '../../lib/instances';

// `part1-part2-<n>` in three chunks, the second after a pause.
export const POST = suiteRoute('stream', async (request, _context, suite) => {
  const n = await suite.bump('stream', request);
  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(encoder.encode('part1-'));
      await new Promise((resolve) => setTimeout(resolve, 5));
      controller.enqueue(encoder.encode('part2-'));
      controller.enqueue(encoder.encode(String(n)));
      controller.close();
    },
  });
  return new Response(stream, { headers: { 'content-type': 'text/plain' } });
});
