import type { InboundReply, InboundWork } from './lane.js';

/** What the event-loop thread sends the inbound thread. */
export type ToInboundThread = { kind: 'work'; items: Array<{ n: number; work: InboundWork }> } | { kind: 'close' };

/** What the inbound thread sends back. */
export type FromInboundThread =
  | { kind: 'ready' }
  /** Answers, and the agents with new deliveries now on disk (to wake them). */
  | { kind: 'replies'; items: Array<{ n: number; reply: InboundReply } | InboundFailure>; agentIds: string[] };

/** A request the thread could not answer: its error (for an unknown outcome, its cause), and whether it may have been committed. */
export interface InboundFailure {
  n: number;
  error: string;
  outcomeUnknown: boolean;
}

/** What the inbound thread is started with. */
export interface InboundThreadData {
  dataDir: string;
}
