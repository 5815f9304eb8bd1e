/**
 * @module The app's proxy (Next.js 16's name for middleware): this request's CORS header and request id on every
 * suite route's response. It runs around the route, outside `withIdempotency`: what it sets is never stored, and a
 * replay carries the retry's own values.
 */
import { type NextRequest, NextResponse } from 'next/server';

export function proxy(request: NextRequest): NextResponse {
  const response = NextResponse.next();
  const origin = request.headers.get('origin');
  if (origin !== null) response.headers.set('access-control-allow-origin', origin);
  response.headers.set('x-request-id', crypto.randomUUID());
  return response;
}

export const config = { matcher: '/((?!harness/).*)' };
