import { CLOSE_THEN_OPEN_ACTIONS, isEntryAction, type NormalizedSignal } from '../language/index.js';

/**
 * The signal's age limit on a venue. It applies to entries alone, the orders that open or add
 * exposure: a market opening and a pending entry (limit or stop). It is checked immediately
 * before each of them leaves, on every attempt (a retry after the venue was unreachable, the
 * next run after a restart): a late entry is worse than none. Everything that reduces or
 * protects what is open is never held back by it: closes (whole or in part), cancels of pending
 * entries, stops and targets and their moves (breakeven, trailing). Reducing risk is always
 * allowed, however late.
 */
export interface EntryDeadline {
  /** Why the entry `what` ('the buy market order of 0.1 EURUSD') may not leave now; null: it may. */
  refusal(what: string): string | null;
}

/**
 * The deadline of a signal expiring at `expiresAt` (ISO time). `unreachableSince`: when the
 * venue stopped answering, if it did while the signal waited (null: it did not), for the message.
 */
export function entryDeadline(
  expiresAt: string,
  now: () => number,
  unreachableSince: () => string | null,
): EntryDeadline {
  const deadline = Date.parse(expiresAt);
  return {
    refusal(what) {
      if (!(now() > deadline)) return null;
      const since = unreachableSince();
      return since === null
        ? `the signal expired at ${expiresAt} before ${what} could be sent; it was not sent`
        : `the signal expired at ${expiresAt} while the venue was unreachable since ${since}; ${what} was not sent`;
    },
  };
}

/** An entry refused by the signal's age: nothing of it left. */
export class SignalExpiredError extends Error {
  override readonly name = 'SignalExpiredError';
}

/**
 * Whether every step the signal can come to is an entry (buy, sell, the pending orders, without
 * `opposite`): expired, such a signal has nothing left to do, and can be refused without asking
 * the venue anything when none of its orders can have left yet.
 */
export function entriesOnly(signal: NormalizedSignal): boolean {
  return (
    isEntryAction(signal.action) && !CLOSE_THEN_OPEN_ACTIONS.includes(signal.action) && signal.opposite === undefined
  );
}
