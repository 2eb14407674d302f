import type { InboundLane, InboundLaneEvents } from '../inbound/inbound-lane.js';
import type { Store } from './store.js';

/**
 * A store, opened, with everything else that differs by backend, so that no code outside
 * `src/store/` asks which backend it has.
 */
export interface StoreBackend {
  store: Store;
  /**
   * Starts where this store's inbound requests are checked and committed. Agents hear of the
   * deliveries it commits through `store.deliveries.watch`, whichever connection committed them.
   */
  startInboundLane(events: InboundLaneEvents): Promise<InboundLane>;
}
