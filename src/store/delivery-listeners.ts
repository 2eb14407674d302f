/**
 * The listeners `Store.watchDeliveries` registered in this process: told the ids of agents with
 * new deliveries once those are committed (and, for SQLite, durable).
 */
export class DeliveryListeners {
  private readonly listeners = new Set<(agentIds: string[]) => void>();

  /** Registers `listener`; answers the function that removes it. */
  add(listener: (agentIds: string[]) => void): () => void {
    // Wrapped so the same function may be registered twice and each unsubscribe removes one.
    const entry = (agentIds: string[]) => listener(agentIds);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  notify(agentIds: string[]): void {
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
