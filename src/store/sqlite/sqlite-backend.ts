import { usesInboundThread, type InboundThreadSetting } from '../inbound-thread-choice.js';
import type { StoreBackend } from '../store-backend.js';
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
    inboundLane: usesInboundThread(options.inboundThread)
      ? {
          kind: 'thread',
          dataDir: options.dataDir,
          announceDeliveries: (agentIds) => store.deliveries.announce(agentIds),
          // That thread's commits checkpoint the WAL from now on, not the event loop's.
          threadStarted: () => store.leaveCheckpointsToInboundThread(),
        }
      : { kind: 'event-loop' },
  };
}
