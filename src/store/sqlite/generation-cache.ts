/**
 * Rows found by a key, kept in memory while a generation counter stays where it was. Triggers
 * move the counter in the same commit as any change to the rows (on any connection: the CLI's
 * too), so a value read after that commit is never a stale one. When to ask for the counter is
 * the owner's choice: every lookup (an agent's token must be refused on the very next request)
 * or once per event-loop turn (sources, behind `PRAGMA data_version`).
 */
export class GenerationCache<V> {
  private readonly values = new Map<string, V>();
  private generation = -1;

  constructor(private readonly readGeneration: () => number) {}

  /** Reads the counter and empties the cache if it moved. */
  refresh(): void {
    const generation = this.readGeneration();
    if (generation !== this.generation) {
      this.values.clear();
      this.generation = generation;
    }
  }

  /** The cached value, or the one `find` reads (kept unless null: unknown keys are read each time). */
  get(key: string, find: () => V | null): V | null {
    const known = this.values.get(key);
    if (known !== undefined) return known;
    const found = find();
    if (found !== null) this.values.set(key, found);
    return found;
  }

  /** This connection changed a row: whatever was read before goes. */
  clear(): void {
    this.values.clear();
  }
}
