import { ErrorCode } from '../errors/catalog.js';
import type { RouteDescription } from '../openapi/index.js';

const health = (
  ok: string,
): {
  type: 'object';
  properties: Record<string, { type: 'string'; enum?: string[]; description?: string }>;
  required: string[];
} => ({
  type: 'object',
  properties: {
    status: { type: 'string', enum: [ok, 'failing'] },
    store: { type: 'string', enum: ['sqlite', 'postgres'] },
    detail: {
      type: 'string',
      description:
        'what to do; why it is failing (a database error, the disk space) only with the admin or metrics token as a bearer',
    },
  },
  required: ['status', 'store'],
});

/** `GET /healthz`: liveness. */
export const HEALTHZ_DESCRIPTION: RouteDescription = {
  summary: 'Whether the process serves (liveness)',
  description:
    'For supervisors; no token (with the admin or metrics token as a bearer, the detail says why it fails). 503 only when signals cannot be received until the service is restarted.',
  tag: 'service',
  auth: 'none',
  answers: {
    200: { description: 'The process serves', schema: health('ok') },
    503: { description: 'Restart the service', schema: health('ok') },
  },
  problems: [ErrorCode.UNAUTHORIZED, ErrorCode.TOO_MANY_WRONG_TOKENS],
};

/** `GET /readyz`: readiness. */
export const READYZ_DESCRIPTION: RouteDescription = {
  summary: 'Whether signals can be received and stored now (readiness)',
  description:
    'For load balancers and monitors; no token (with the admin or metrics token as a bearer, the detail says why it fails). 503 while the store does not answer; it recovers by itself. One probe of the store at a time, shared by every caller meanwhile.',
  tag: 'service',
  auth: 'none',
  answers: {
    200: { description: 'Signals can be received and stored', schema: health('ready') },
    503: { description: 'Signals cannot be received or stored now', schema: health('ready') },
  },
  problems: [ErrorCode.UNAUTHORIZED, ErrorCode.TOO_MANY_WRONG_TOKENS],
};
