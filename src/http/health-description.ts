import type { RouteDescription } from '../openapi/index.js';

const health = (ok: string): { type: 'object'; properties: Record<string, { type: 'string'; enum?: string[]; description?: string }>; required: string[] } => ({
  type: 'object',
  properties: {
    status: { type: 'string', enum: [ok, 'failing'] },
    store: { type: 'string', enum: ['sqlite', 'postgres'] },
    detail: { type: 'string', description: 'why it is failing and what to do' },
  },
  required: ['status', 'store'],
});

/** `GET /healthz`: liveness. */
export const HEALTHZ_DESCRIPTION: RouteDescription = {
  summary: 'Whether the process serves (liveness)',
  description: 'For supervisors; no token. 503 only when signals cannot be received until the service is restarted.',
  tag: 'service',
  auth: 'none',
  answers: { 200: { description: 'The process serves', schema: health('ok') }, 503: { description: 'Restart the service', schema: health('ok') } },
  problems: [],
};

/** `GET /readyz`: readiness. */
export const READYZ_DESCRIPTION: RouteDescription = {
  summary: 'Whether signals can be received and stored now (readiness)',
  description: 'For load balancers and monitors; no token. 503 while the store does not answer; it recovers by itself.',
  tag: 'service',
  auth: 'none',
  answers: { 200: { description: 'Signals can be received and stored', schema: health('ready') }, 503: { description: 'Signals cannot be received or stored now', schema: health('ready') } },
  problems: [],
};
