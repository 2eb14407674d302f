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
export function sqliteBackend(options: { dataDir: string; inboundThread?: InboundThreadSetting; checkpointThread?: boolean }): StoreBackend {
  // The server's store checkpoints the WAL on a thread of its own, for its inbound thread too.
  const store = openSqliteStore({ dataDir: options.dataDir, checkpoints: options.checkpointThread ? 'thread' : 'on-commit' });
  return {
    store,
    startInboundLane: async (events) =>
      usesInboundThread(options.inboundThread)
        ? InboundThreadLane.start(
            { dataDir: options.dataDir },
            { onDeliveries: (agentIds) => store.announceDeliveries(agentIds), onFailure: events.onFailure },
          )
        : eventLoopLane(store),
  };
}
