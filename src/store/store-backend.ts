import type { InboundLanePlace } from './inbound-lane-place.js';
import type { Store } from './store.js';

/**
 * A store, opened, with everything else that differs by backend, so that no code outside
 * `src/store/` asks which backend it has.
 */
export interface StoreBackend {
  store: Store;
  /**
   * Where this store's inbound requests are checked and committed (`startInboundLane` in
   * src/inbound starts it). Agents hear of the deliveries it commits through
   * `store.deliveries.watch`, whichever connection committed them.
   */
  inboundLane: InboundLanePlace;
}
