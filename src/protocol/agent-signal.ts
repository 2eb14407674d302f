import type { NormalizedSignal } from '../language/index.js';
import type { EffectiveRiskRules } from '../risk/risk-rules.js';

/** A delivery as handed to an agent: by `GET /api/agent/signals` and the WebSocket's `signals`. */
export interface AgentSignal {
  id: string;
  /** Position in the agent's queue: 1, 2, 3… in acceptance order. */
  seq: number;
  sourceId: string;
  receivedAt: string;
  expiresAt: string;
  signal: NormalizedSignal;
  /**
   * The account's risk rules narrowed by the source's, as they stood when the signal was
   * received; absent when neither has rules. The agent checks entries against them.
   */
  risk?: EffectiveRiskRules;
  /**
   * Set on the instruction a halt with flatten queues: close every position and cancel every
   * pending order of the agent's account at the venue. Its `signal` is `{ symbol: '*',
   * action: 'positionflat' }` and is not executed as a signal.
   */
  flatten?: { reason: string };
}
