import type { RouteDescription } from '../openapi/index.js';

const HEALTH: { type: 'object'; properties: Record<string, { type: 'string'; enum?: string[]; description?: string }>; required: string[] } = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['ok', 'failing'] },
    store: { type: 'string', enum: ['sqlite', 'postgres'] },
    detail: { type: 'string', description: 'why it is failing and what to do' },
  },
  required: ['status', 'store'],
};

/** `GET /healthz`. */
export const HEALTH_DESCRIPTION: RouteDescription = {
  summary: 'Whether the service can take signals',
  description: 'For load balancers and monitors; no token.',
  tag: 'service',
  auth: 'none',
  answers: { 200: { description: 'Signals can be received and stored', schema: HEALTH }, 503: { description: 'Signals cannot be received or stored', schema: HEALTH } },
  problems: [],
};
