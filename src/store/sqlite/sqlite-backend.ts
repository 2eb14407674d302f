import { eventLoopLane } from '../../inbound/event-loop-lane.js';
import { usesInboundThread, type InboundThreadSetting } from '../inbound-thread-choice.js';
import type { StoreBackend } from '../store-backend.js';
import { InboundThreadLane } from './inbound-thread-lane.js';
import { openSqliteStore } from './sqlite-store.js';

/**
 * The embedded store. With more than one CPU, inbound requests are checked and committed on a
 * thread of their own, with its own connection, so the event loop only reads requests and
 * writes answers; the deliveries that thread commits are announced to this store's watchers.
 * With one CPU they are checked and committed on the event loop, against this store's own
 * connection, with the same group commit and the WAL sync on libuv's thread pool.
 */
export function sqliteBackend(options: { dataDir: string; inboundThread?: InboundThreadSetting }): StoreBackend {
  const store = openSqliteStore({ dataDir: options.dataDir });
  return {
    store,
    startInboundLane: async (events) => {
      if (!usesInboundThread(options.inboundThread)) return eventLoopLane(store);
      const lane = await InboundThreadLane.start(
        { dataDir: options.dataDir },
        { onDeliveries: (agentIds) => store.deliveries.announce(agentIds), onFailure: events.onFailure },
      );
      // That thread's commits checkpoint the WAL from now on, not the event loop's.
      store.leaveCheckpointsToInboundThread();
      return lane;
    },
  };
}
