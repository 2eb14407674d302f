import type { Store } from '../store/store.js';

/**
 * Why a watcher is woken: deliveries were queued, an ack freed room, a WebSocket session of
 * the agent opened (a waiting poll must give way), or the server is closing.
 */
export type WakeReason = 'queued' | 'acked' | 'connected' | 'closing';

export type AgentWatcher = (reason: WakeReason) => void;

/**
 * Who is waiting for an agent's deliveries in this process (long-polls and WebSocket
 * sessions), woken by the store's commit notifications. The board carries no data: a woken
 * watcher asks the store, which stays the one source of truth.
 */
export class DeliveryBoard {
  private readonly watchers = new Map<string, Set<AgentWatcher>>();
  private readonly stopWatching: () => void;
  private closingFlag = false;

  constructor(store: Store) {
    this.stopWatching = store.deliveries.watch((agentIds) => {
      for (const agentId of agentIds) this.wake(agentId, 'queued');
    });
  }

  get closing(): boolean {
    return this.closingFlag;
  }

  /** Calls `watcher` whenever the agent may have something new; answers the unsubscribe. */
  watch(agentId: string, watcher: AgentWatcher): () => void {
    let set = this.watchers.get(agentId);
    if (set === undefined) {
      set = new Set();
      this.watchers.set(agentId, set);
    }
    set.add(watcher);
    return () => {
      const current = this.watchers.get(agentId);
      if (current === undefined) return;
      current.delete(watcher);
      if (current.size === 0) this.watchers.delete(agentId);
    };
  }

  wake(agentId: string, reason: WakeReason): void {
    const set = this.watchers.get(agentId);
    if (set === undefined) return;
    for (const watcher of [...set]) watcher(reason);
  }

  /** The server is closing: every watcher is woken once more and should answer what it has. */
  close(): void {
    if (this.closingFlag) return;
    this.closingFlag = true;
    this.stopWatching();
    for (const set of [...this.watchers.values()]) for (const watcher of [...set]) watcher('closing');
  }
}
