import type { JournalFormat } from './agent-journal.js';
import type { ExecutedSignal } from './executed-signal.js';
import type { PendingOrder, Position, Quote } from '../engine/index.js';
import type { AgentSignal } from '../protocol/agent-signal.js';
import type { VenueBook } from './venue-book.js';
import type { VenueOrderRef } from './venue.js';
import type { LedgerOutboxRecord } from './ledger-outbox.js';
import type { CarriedEntries } from './risk-ledger.js';

/**
 * A position that left the book at a start's reconciliation (the venue no longer held it) while
 * signals were in flight: one of them may have been closing it. Kept, with its venue links, until
 * those signals have their outcome, so the one that closed it says what the venue did.
 */
export interface DepartedPosition {
  position: Position;
  venueId?: string;
  protection?: VenueBook['protection'][string];
  /** The signals in flight when it left. */
  signals: string[];
}

/**
 * A pending order that left the book at a start's reconciliation (the venue no longer lists it,
 * and holds nothing it opened) while signals were in flight: one of them may have been cancelling
 * it. Kept, with its venue order, until those signals have their outcome, so the cancel executed
 * again finds it gone at the venue and is executed, not refused for want of an order.
 */
export interface DepartedOrder {
  order: PendingOrder;
  ref: VenueOrderRef;
  /** The signals in flight when it left. */
  signals: string[];
}

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
  /**
   * The in-flight signals themselves (absent in journals written before they were kept): the
   * next run finishes them without waiting for the server, which hands out no signal past its
   * age again, though its orders may stand at the venue.
   */
  inFlightSignals?: AgentSignal[];
  /**
   * In-flight signal id → the ticket reserved for what it opens (absent: none, or a journal from
   * before signals of different symbols ran side by side): a restart opens it under the same one.
   */
  tickets?: Record<string, number>;
  /**
   * In-flight signal id → the venue's quotes (by venue symbol) its execution was first decided at
   * (absent: none, or a journal from before they were kept): a signal finished after a restart
   * reports that quote at receipt, not the one its retry read.
   */
  receipts?: Record<string, Record<string, Quote>>;
  /** Absent: none. */
  departed?: DepartedPosition[];
  /** Absent: none. */
  departedOrders?: DepartedOrder[];
  /**
   * Entries counted for the daily risk rules that risk-days.json did not hold durably when this
   * was written (absent: none, or a journal from before they were carried, whose writes waited
   * for that file instead): a start counts those the file lacks.
   */
  riskEntries?: CarriedEntries;
  /** Fills for the server's ledger it has not confirmed yet (absent: none, or a journal from before the ledger). */
  ledger?: LedgerOutboxRecord;
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
