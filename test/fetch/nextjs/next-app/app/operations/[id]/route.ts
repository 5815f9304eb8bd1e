import { statusRoute } from '../../../lib/instances';

export const GET = statusRoute();
