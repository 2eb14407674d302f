/**
 * The flags of this run contradict the paper account on disk (another ticks file, another
 * symbol map under open positions, a currency the feed cannot price): running anyway would
 * trade at prices or on positions the account never had, so the agent refuses to start. Like
 * a bad flag, it exits 2; the message names both sides and what to do.
 */
export class StoredAccountConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoredAccountConflictError';
  }
}
