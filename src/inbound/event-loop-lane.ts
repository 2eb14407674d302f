import type { Store } from '../store/store.js';
import { answerInbound } from './answer-inbound.js';
import type { InboundLane } from './inbound-lane.js';

/** Inbound requests answered on the event loop thread, against the service's own store. */
export function eventLoopLane(store: Store): InboundLane {
  return {
    receive: (request) => answerInbound(store, request),
    failure: null,
    close: async () => undefined,
  };
}
