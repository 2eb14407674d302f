/**
 * The listeners `store.deliveries.watch` registered in this process: told the ids of agents with
 * new deliveries once those are committed (on SQLite before their sync: a hand-out syncs for
 * itself). Also the listeners of `store.deliveries.watchExpiries`, told of the deliveries a hand-out
 * expired (`T` the expired deliveries).
 */
export class DeliveryListeners<T = string[]> {
  private readonly listeners = new Set<(agentIds: T) => void>();

  /** Registers `listener`; answers the function that removes it. */
  add(listener: (agentIds: T) => void): () => void {
    // Wrapped so the same function may be registered twice and each unsubscribe removes one.
    const entry = (agentIds: T) => listener(agentIds);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  notify(agentIds: T): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(agentIds);
      } catch {
        // A listener's failure is its own: the signals are committed whatever it does.
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}
