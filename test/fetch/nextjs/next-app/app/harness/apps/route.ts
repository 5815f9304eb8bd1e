import { createInstance } from '../../../lib/instances';
import type { AppSpec } from '../../../lib/wire';

// A test case's app instance: its store and options; answers its id, or why the options were refused.
export async function POST(request: Request): Promise<Response> {
  try {
    return Response.json({ id: createInstance((await request.json()) as AppSpec) }, { status: 201 });
  } catch (error) {
    return Response.json({ error: String(error) }, { status: 400 });
  }
}
