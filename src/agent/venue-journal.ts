import type { JournalFormat } from './agent-journal.js';
import type { ExecutedSignal } from './executed-signal.js';
import type { VenueBook } from './venue-book.js';

/** What an agent on a venue keeps on disk: its book and the signals it executed, in one file. */
export interface VenueJournalFile {
  version: 1;
  venue: string;
  agentId: string | null;
  book: VenueBook;
  /** Oldest first. */
  executed: ExecutedSignal[];
  /**
   * Signals whose execution began and has no outcome yet: after a crash their orders may stand
   * on the venue, so executing them again looks each client id up first.
   */
  inFlight: string[];
  savedAt: string;
}

export const VENUE_JOURNAL: JournalFormat<VenueJournalFile> = {
  kind: 'a venue journal',
  remedy: 'restore it from a backup; the agent cannot tell which signals it executed without it',
  accepts: (value): value is VenueJournalFile => {
    const parsed = value as Partial<VenueJournalFile> | null;
    return parsed?.version === 1 && typeof parsed.book?.state === 'object' && Array.isArray(parsed.executed);
  },
};
