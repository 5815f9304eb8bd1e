import { closeInstance } from '../../../../lib/instances';

export async function DELETE(_request: Request, { params }: { params: Promise<{ id: string }> }) {
  const closed = await closeInstance((await params).id);
  return new Response(null, { status: closed ? 204 : 404 });
}
