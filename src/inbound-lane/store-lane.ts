import type { Store } from '../store/store.js';
import { answerInbound } from './answer-inbound.js';
import type { InboundLane } from './lane.js';

/** Inbound requests answered on the event loop thread, against the service's own store. */
export function storeLane(store: Store): InboundLane {
  return {
    receive: (work) => answerInbound(store, work),
    failure: null,
    close: async () => undefined,
  };
}
