/** A symbol failing the same way is logged again at most this often (a pass runs every few seconds). */
const LOG_AGAIN_MS = 60_000;

/** One symbol whose management fails, as the published state shows it. */
export interface FailingSymbol {
  symbol: string;
  /** The latest failure's message. */
  error: string;
  /** When it began failing (ISO time). */
  since: string;
  /** Failed passes in a row. */
  failures: number;
}

/**
 * The symbols whose management pass failed (a quote refused, a stop or a cancel that failed):
 * each symbol is managed on its own, so one failing never stops the others. Says when a failure
 * is worth a log line: the first, a new message, or the same one again a minute later.
 */
export class SymbolFailures {
  private readonly failing = new Map<string, FailingSymbol & { loggedAt: number }>();

  /** Records a failed pass of `symbol`; true when it should be logged now. */
  failed(symbol: string, error: string, now: number): boolean {
    const was = this.failing.get(symbol);
    const log = was === undefined || was.error !== error || now - was.loggedAt >= LOG_AGAIN_MS;
    this.failing.set(symbol, {
      symbol,
      error,
      since: was?.since ?? new Date(now).toISOString(),
      failures: (was?.failures ?? 0) + 1,
      loggedAt: log ? now : was!.loggedAt,
    });
    return log;
  }

  /** Records a pass of `symbol` that went through; what it had been failing with, if it had. */
  succeeded(symbol: string): FailingSymbol | null {
    const was = this.failing.get(symbol);
    if (was === undefined) return null;
    this.failing.delete(symbol);
    return { symbol: was.symbol, error: was.error, since: was.since, failures: was.failures };
  }

  /** Forgets symbols the book no longer manages. */
  keepOnly(symbols: ReadonlySet<string>): void {
    for (const symbol of this.failing.keys()) if (!symbols.has(symbol)) this.failing.delete(symbol);
  }

  /** The failing symbols, for the published state. */
  list(): FailingSymbol[] {
    return [...this.failing.values()].map(({ symbol, error, since, failures }) => ({ symbol, error, since, failures }));
  }
}
