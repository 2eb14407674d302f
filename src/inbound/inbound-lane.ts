import type { InboundAnswer } from './inbound-answer.js';
import type { InboundRequest } from './inbound-request.js';

/**
 * Takes inbound requests through checks 1 to 9 and the commit, in this thread or another.
 * `startInboundLane` starts the one the store's backend names (`StoreBackend.inboundLane`).
 */
export interface InboundLane {
  receive(request: InboundRequest): Promise<InboundAnswer>;
  /** Why requests can no longer be received (the lane's thread died), or null while they can. */
  readonly failure: Error | null;
  /** Answers what is in flight, then stops; nothing is received after. */
  close(): Promise<void>;
}

/** What a lane tells the service about itself. */
export interface InboundLaneEvents {
  /** The lane stopped unasked: every request from now on fails. */
  onFailure: (error: Error) => void;
}
