import type { DeliveryStatus } from '../protocol/delivery.js';
import type { LogEntry } from './log-entry.js';
import type { SignalRecord, SignalStatus, SignalWithDeliveries } from './records.js';

/** Each source's log of the requests it received, accepted or not (written by the ingest). */
export interface SignalLog {
  list(filter: SignalFilter): Promise<SignalPage>;
  /** The same page with its JSON columns as stored (what the admin API answers it from). */
  listLogEntries(filter: SignalFilter): Promise<LogEntryPage>;
  get(id: string): Promise<SignalWithDeliveries | null>;
  /**
   * How many signals the account's log holds per UTC day from `fromDay` to `toDay`
   * (`YYYY-MM-DD`, both included), accepted and rejected apart; days without any are left out.
   */
  countPerDay(accountId: string, fromDay: string, toDay: string): Promise<DayCount[]>;
}

export interface SignalFilter {
  sourceId?: string;
  status?: SignalStatus;
  /** Only signals with at least one delivery in this status. */
  outcome?: DeliveryStatus;
  /** Only signals whose normalized symbol is this. */
  symbol?: string;
  limit: number;
  /** Only signals older (in log order: receivedAt, then id) than the signal with this id. */
  before?: string;
}

/** One page of the signal log, newest first. */
export interface SignalPage {
  signals: SignalRecord[];
  /** The id to pass as `before` for the following page; null when there is none. */
  next: string | null;
}

export interface LogEntryPage {
  entries: LogEntry[];
  /** The id to pass as `before` for the following page; null when there is none. */
  next: string | null;
}

/** Signals logged on one UTC day. */
export interface DayCount {
  /** `YYYY-MM-DD`. */
  day: string;
  accepted: number;
  rejected: number;
}
