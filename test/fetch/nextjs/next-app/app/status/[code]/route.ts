import { suiteRoute } from '../../../lib/instances';

// The status the dynamic segment names, read from the context Next.js passes (through the wrapper).
export const POST = suiteRoute<{ code: string }>('status', async (request, { params }, suite) => {
  const n = await suite.bump('status', request);
  return Response.json({ n }, { status: Number((await params).code) });
});
