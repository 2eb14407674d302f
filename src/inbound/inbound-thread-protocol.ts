import type { InboundAnswer } from './inbound-answer.js';
import type { InboundRequest } from './inbound-request.js';

/** What the event-loop thread sends the inbound thread. */
export type ToInboundThread =
  { kind: 'requests'; items: Array<{ n: number; request: InboundRequest }> } | { kind: 'close' };

/** What the inbound thread sends back. */
export type FromInboundThread =
  | { kind: 'ready' }
  /** Answers, and the agents with new deliveries now on disk (to wake them). */
  | { kind: 'answers'; items: Array<{ n: number; answer: InboundAnswer } | InboundFailure>; agentIds: string[] };

/** A request the thread could not answer: its error (for an unknown outcome, its cause), and whether it may have been committed. */
export interface InboundFailure {
  n: number;
  error: string;
  outcomeUnknown: boolean;
  /** The store had no room (or could not be reached): nothing was committed. */
  unavailable: boolean;
}

/** What the inbound thread is started with. */
export interface InboundThreadData {
  dataDir: string;
}
