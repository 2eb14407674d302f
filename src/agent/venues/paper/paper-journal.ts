import type { EngineState } from '../../../engine/index.js';
import type { JournalFormat } from '../../agent-journal.js';
import type { ExecutedSignal } from '../../executed-signal.js';
import type { FeedPosition } from './price-feed.js';
import type { LedgerOutboxRecord } from '../../ledger-outbox.js';
import type { CarriedEntries } from '../../risk-ledger.js';

/** The paper account on disk: the engine state and the signals it holds, in one file. */
export interface PaperBook {
  version: 1;
  agentId: string | null;
  engine: EngineState;
  /** Oldest first. */
  executed: ExecutedSignal[];
  /** Where the feed was; a ticks file without `file` and `sha256` was recorded before they were kept. */
  feed: FeedPosition | { kind: 'ticks-file'; applied: number; file?: undefined; sha256?: undefined };
  /**
   * The `--instruments` file the account last ran with (absolute path; null: none), for
   * messages only: what counts is the symbol map and overrides in `engine.config`. Absent in
   * books written before it was recorded.
   */
  instrumentsFile?: string | null;
  /** Fills for the server's ledger it has not confirmed yet, written by the agent beside the account (absent: none). */
  ledger?: LedgerOutboxRecord;
  /** Entries for the daily risk rules risk-days.json lacked at this write, written by the agent (absent: none). */
  riskEntries?: CarriedEntries;
  savedAt: string;
}

/** The paper account's file; the agent cannot tell which signals it executed without it, so it never starts over on its own. */
export const PAPER_JOURNAL: JournalFormat<PaperBook> = {
  kind: 'a paper account',
  remedy: 'restore it from a backup, or start a new paper account with a fresh SIGNALGATE_DATA_DIR',
  accepts: isBook,
};

function isBook(value: unknown): value is PaperBook {
  const book = value as Partial<PaperBook> | null;
  const engine = book?.engine as Partial<EngineState> | undefined;
  return (
    typeof book === 'object' &&
    book !== null &&
    book.version === 1 &&
    typeof engine === 'object' &&
    engine !== null &&
    typeof engine.config === 'object' &&
    typeof engine.balance === 'number' &&
    Array.isArray(engine.positions) &&
    Array.isArray(engine.orders) &&
    Array.isArray(book.executed) &&
    (book.feed === null || typeof book.feed?.kind === 'string')
  );
}
