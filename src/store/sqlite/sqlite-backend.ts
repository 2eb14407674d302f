import type { StoreBackend } from '../store-backend.js';
import { InboundThreadLane } from './inbound-thread-lane.js';
import { openSqliteStore } from './sqlite-store.js';

/**
 * The embedded store. Inbound requests are checked and committed on a thread of their own,
 * with its own connection, so the event loop only reads requests and writes answers; the
 * deliveries that thread commits are announced to this store's watchers.
 */
export function sqliteBackend(options: { dataDir: string }): StoreBackend {
  const store = openSqliteStore({ dataDir: options.dataDir });
  return {
    store,
    startInboundLane: (events) =>
      InboundThreadLane.start(
        { dataDir: options.dataDir },
        { onDeliveries: (agentIds) => store.announceDeliveries(agentIds), onFailure: events.onFailure },
      ),
  };
}
