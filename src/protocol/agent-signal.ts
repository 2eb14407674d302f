import type { NormalizedSignal } from '../language/index.js';

/** A delivery as handed to an agent: by `GET /api/agent/signals` and the WebSocket's `signals`. */
export interface AgentSignal {
  id: string;
  /** Position in the agent's queue: 1, 2, 3… in acceptance order. */
  seq: number;
  sourceId: string;
  receivedAt: string;
  expiresAt: string;
  signal: NormalizedSignal;
}
