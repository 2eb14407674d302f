import type { StoreBackend } from '../store/store-backend.js';
import { eventLoopLane } from './event-loop-lane.js';
import type { InboundLane, InboundLaneEvents } from './inbound-lane.js';
import { InboundThreadLane } from './inbound-thread-lane.js';

/**
 * Starts the lane in the place the store's backend names: on the event loop against the
 * service's store, or on the inbound thread with a connection of its own.
 */
export async function startInboundLane(backend: StoreBackend, events: InboundLaneEvents): Promise<InboundLane> {
  const place = backend.inboundLane;
  if (place.kind === 'event-loop') return eventLoopLane(backend.store);
  const lane = await InboundThreadLane.start(
    { dataDir: place.dataDir },
    { onDeliveries: (agentIds) => place.announceDeliveries(agentIds), onFailure: events.onFailure },
  );
  place.threadStarted();
  return lane;
}
