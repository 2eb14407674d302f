/**
 * Reads of what the group commits write (the signal log and its deliveries, usage, the agents'
 * state, the ledger). A batch's COMMIT is visible before its sync of the WAL returns, and the
 * agents' writes commit their next batch while the one before still syncs, so waiting for the
 * disk before reading is not enough: a write committing during that wait would be shown before
 * it is on disk and answered, and could vanish in a crash. So `read` reads first, then answers
 * once every batch committed so far is durable. With nothing syncing it answers at once, with no
 * sync of its own.
 */
export class DurableReads {
  constructor(
    /** Resolves once everything committed when it was called is durable (its writers answered). */
    private readonly whenDurable: () => Promise<unknown>,
  ) {}

  async read<T>(read: () => T): Promise<T> {
    const found = read();
    // Asked at once after the read, with no turn between: it covers every batch the read saw.
    await this.whenDurable();
    return found;
  }
}
