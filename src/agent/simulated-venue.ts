import type { EngineState, Tick } from '../engine/index.js';
import type { JournalFormat, JournalRecord } from './agent-journal.js';
import type { ExecutedSignal } from './executed-signal.js';
import type { Venue } from './venue.js';

/** What a simulated venue keeps of the agent's book: the account and the signals it executed. */
export interface SimulatedBook {
  agentId: string | null;
  state: EngineState;
  /** Oldest first. */
  executed: ExecutedSignal[];
}

/**
 * A venue that is the engine's own simulation of the account (paper). The agent's book is the
 * account: nothing stands anywhere else, so there is nothing to reconcile at start, to look up
 * again after a restart or to read from the venue before a signal. Prices come as ticks from the
 * venue's own feed, and the book is kept in the venue's own file, whose format it owns.
 */
export interface SimulatedVenue<T extends JournalRecord = JournalRecord> extends Venue {
  readonly simulated: true;
  /** How messages name the account: 'paper account'. */
  readonly accountName: string;
  /** The book's file in the agent's directory, and what it holds. */
  readonly journal: { name: string; format: JournalFormat<T> };
  /**
   * Takes up the stored file (null: a new account) and prepares the feed; from then on the venue
   * reads the account through `book`. Throws when this run's settings contradict the stored account.
   */
  restore(stored: T | null, file: string, book: () => EngineState): SimulatedBook;
  /** What the journal writes for the book as it is now. */
  record(book: SimulatedBook): Omit<T, keyof JournalRecord>;
  /** Why a signal on this symbol can never be executed here (the feed never prices it); null: it can. */
  unpriced(signalSymbol: string): string | null;
  /** Starts the feed; the agent applies each tick to the book. `shutdown()` stops it. */
  start(onTick: (tick: Tick) => void): void;
  /** The account as the agent publishes it. */
  published(now: number): Record<string, unknown>;
}

export function isSimulated(venue: Venue): venue is SimulatedVenue {
  return (venue as Partial<SimulatedVenue>).simulated === true;
}
