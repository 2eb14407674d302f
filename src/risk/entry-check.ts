import type { Side } from '../engine/index.js';
import { DEFAULT_DAY_ZONE, localTime, riskDayKey } from './risk-day.js';
import type { EffectiveRiskRules, LossLimit, TradingWindow, Weekday } from './risk-rules.js';

/** The rules an entry can break, as a refusal names them. */
export type RiskRuleName =
  | 'maxLotsPerOrder'
  | 'maxNotionalPerOrder'
  | 'maxPositionLots'
  | 'maxOpenPositions'
  | 'maxEntriesPerDay'
  | 'maxDailyLoss'
  | 'maxTotalLoss'
  | 'dayTimeZone'
  | 'tradingWindows'
  | 'allowedSymbols'
  | 'refusedSymbols';

/** The entry the engine is about to send: a market opening or a pending entry (limit or stop). */
export interface EntryIntent {
  /** The signal's symbol (before any symbol map): what the symbol lists name. */
  symbol: string;
  /** The venue's symbol: what the venue's positions are kept under. */
  venueSymbol: string;
  side: Side;
  lots: number;
  /** Lots × contract size × price, in the account currency; null: the agent cannot convert it (the rule then refuses). */
  notional: number | null;
}

/** A position as the venue holds it. */
export interface HeldPosition {
  symbol: string;
  side: Side;
  lots: number;
}

/** What the venue says of the account, and what the agent counted of the day. */
export interface AccountFacts {
  /** The venue keeps one net position per symbol (one-way mode). */
  nets: boolean;
  positions: readonly HeldPosition[];
  /** The entries sent lately, as instants (epoch ms) and how many left then; those of the rule's day are counted. */
  entries: readonly { at: number; count: number }[];
  equity: number;
  balance: number;
  /** The equity at each day's start, by `riskDayKey`; a day not in it has no daily-loss figure yet. */
  dayStartEquity: Readonly<Record<string, number>>;
}

export interface RiskViolation {
  rule: RiskRuleName;
  limit: number | string;
  /** What the entry would have reached (or the account stands at, for the loss rules). */
  value: number | string;
  /** Names the rule, the limit and the value, for the signal's outcome. */
  message: string;
}

/** Lots and money compared at a precision float sums cannot disturb (0.1 + 0.2 is 0.3 here). */
function tidy(value: number): number {
  return Math.round(value * 1e8) / 1e8;
}

function violation(rule: RiskRuleName, limit: number | string, value: number | string, what: string): RiskViolation {
  return { rule, limit, value, message: `risk rule ${rule} (limit ${limit}, value ${value}): ${what}` };
}

/** A loss limit as an amount: the smaller of the amount and the percent of `base`; null when neither is set. */
export function lossAllowance(limit: LossLimit, base: number): number | null {
  const parts = [limit.amount, limit.percent == null ? null : (limit.percent / 100) * base].filter(
    (part): part is number => part != null,
  );
  return parts.length === 0 ? null : tidy(Math.min(...parts));
}

function describeLimit(limit: LossLimit): string {
  const parts = [];
  if (limit.amount != null) parts.push(`${limit.amount}`);
  if (limit.percent != null) parts.push(`${limit.percent} %`);
  return parts.join(' or ');
}

/**
 * Whether the account's loss has reached `maxDailyLoss` or `maxTotalLoss`: the daily loss is the
 * day's starting equity minus the equity now (realized and unrealized alike, as the venue's equity
 * holds both), the total loss `startingBalance` minus the equity now. Reaching the limit counts:
 * the account is halted there. Null: neither is reached (or the day's start is not known yet).
 */
export function lossBreach(rules: EffectiveRiskRules, facts: AccountFacts, now: number): RiskViolation | null {
  const daily = rules.maxDailyLoss;
  if (daily) {
    const start = facts.dayStartEquity[riskDayKey(now, rules.dayTimeZone)];
    const allowance = start === undefined ? null : lossAllowance(daily, start);
    if (start !== undefined && allowance !== null) {
      const loss = tidy(start - facts.equity);
      if (loss >= allowance)
        return violation(
          'maxDailyLoss',
          describeLimit(daily),
          loss,
          `the day's loss is ${loss} (equity ${facts.equity} against ${start} at the day's start in ${rules.dayTimeZone ?? DEFAULT_DAY_ZONE}), at or above the limit of ${allowance}`,
        );
    }
  }
  const total = rules.maxTotalLoss;
  if (total) {
    const allowance = lossAllowance(total, total.startingBalance);
    if (allowance !== null) {
      const loss = tidy(total.startingBalance - facts.equity);
      if (loss >= allowance)
        return violation(
          'maxTotalLoss',
          describeLimit(total),
          loss,
          `the total loss is ${loss} (equity ${facts.equity} against the starting balance ${total.startingBalance}), at or above the limit of ${allowance}`,
        );
    }
  }
  return null;
}

function minutesOf(clock: string): number {
  const [hours, minutes] = clock.split(':').map(Number);
  return hours! * 60 + minutes!;
}

const PREVIOUS: Record<Weekday, Weekday> = {
  mon: 'sun',
  tue: 'mon',
  wed: 'tue',
  thu: 'wed',
  fri: 'thu',
  sat: 'fri',
  sun: 'sat',
};

/**
 * Whether `now` is inside the window: on one of its days from `from` (inclusive) to `until`
 * (exclusive). An `until` earlier than `from` runs past midnight, and the hours after midnight
 * belong to the day the window opened on; equal ones make the whole day.
 */
export function insideWindow(window: TradingWindow, now: number): boolean {
  const local = localTime(now, window.timeZone);
  const from = minutesOf(window.from);
  const until = minutesOf(window.until);
  const days = new Set(window.days);
  if (from === until) return days.has(local.weekday);
  if (from < until) return days.has(local.weekday) && local.minutes >= from && local.minutes < until;
  return (
    (days.has(local.weekday) && local.minutes >= from) || (days.has(PREVIOUS[local.weekday]) && local.minutes < until)
  );
}

function describeWindow(window: TradingWindow): string {
  return `${window.days.join(',')} ${window.from}–${window.until} ${window.timeZone}`;
}

/** The symbol as the lists compare it: case does not matter. */
function same(a: string, b: string): boolean {
  return a.toUpperCase() === b.toUpperCase();
}

/**
 * Checks one entry against the rules and the account, at instant `now` (epoch ms, given: the
 * check reads no clock). Null: it may leave. Only entries are checked: closing and cancelling
 * reduce risk and are always allowed. The order of the checks is the order a trader fixes them
 * in: what the signal asks (symbol, time), its size, then the account.
 */
export function checkEntry(
  rules: EffectiveRiskRules,
  entry: EntryIntent,
  facts: AccountFacts,
  now: number,
): RiskViolation | null {
  if (rules.refusedSymbols?.some((s) => same(s, entry.symbol)))
    return violation(
      'refusedSymbols',
      rules.refusedSymbols.join(','),
      entry.symbol,
      `${entry.symbol} is a refused symbol`,
    );
  if (rules.allowedSymbols && !rules.allowedSymbols.some((s) => same(s, entry.symbol)))
    return violation(
      'allowedSymbols',
      rules.allowedSymbols.join(',') || '(none)',
      entry.symbol,
      `${entry.symbol} is not an allowed symbol`,
    );
  for (const window of rules.tradingWindows) {
    let inside: boolean;
    try {
      inside = insideWindow(window, now);
    } catch {
      return violation(
        'tradingWindows',
        describeWindow(window),
        window.timeZone,
        `${window.timeZone} is not a known time zone`,
      );
    }
    if (!inside) {
      const local = localTime(now, window.timeZone);
      const at = `${local.weekday} ${local.clock} ${window.timeZone}`;
      return violation(
        'tradingWindows',
        describeWindow(window),
        at,
        `entries are allowed only inside the window; it is ${at}`,
      );
    }
  }
  const lots = tidy(entry.lots);
  if (rules.maxLotsPerOrder != null && lots > rules.maxLotsPerOrder)
    return violation(
      'maxLotsPerOrder',
      rules.maxLotsPerOrder,
      lots,
      `the order of ${lots} lots ${entry.symbol} is above the limit`,
    );
  if (rules.maxNotionalPerOrder != null) {
    if (entry.notional === null)
      return violation(
        'maxNotionalPerOrder',
        rules.maxNotionalPerOrder,
        'unknown',
        `the notional of ${lots} lots ${entry.symbol} cannot be converted to the account currency, so the limit cannot be checked`,
      );
    const notional = tidy(entry.notional);
    if (notional > rules.maxNotionalPerOrder)
      return violation(
        'maxNotionalPerOrder',
        rules.maxNotionalPerOrder,
        notional,
        `the order of ${lots} lots ${entry.symbol} has a notional of ${notional}, above the limit`,
      );
  }
  const held = facts.positions.filter((p) => p.symbol === entry.venueSymbol);
  if (rules.maxPositionLots != null) {
    const signed = (p: { side: Side; lots: number }) => (p.side === 'buy' ? p.lots : -p.lots);
    // Netted: the one net position after the order; hedged, both sides held are counted.
    const after = facts.nets
      ? Math.abs(held.reduce((sum, p) => sum + signed(p), 0) + signed({ side: entry.side, lots }))
      : held.reduce((sum, p) => sum + p.lots, 0) + lots;
    const value = tidy(after);
    if (value > rules.maxPositionLots)
      return violation(
        'maxPositionLots',
        rules.maxPositionLots,
        value,
        `the position in ${entry.symbol} would reach ${value} lots, above the limit`,
      );
  }
  if (rules.maxOpenPositions != null) {
    // A netting venue adds to the symbol's one position; elsewhere every entry opens one.
    const opens = !(facts.nets && held.length > 0);
    const value = facts.positions.length + (opens ? 1 : 0);
    if (value > rules.maxOpenPositions)
      return violation(
        'maxOpenPositions',
        rules.maxOpenPositions,
        value,
        `${value} positions would be open, above the limit`,
      );
  }
  const zone = rules.dayTimeZone ?? DEFAULT_DAY_ZONE;
  let today: string;
  try {
    today = riskDayKey(now, zone);
  } catch {
    return violation('dayTimeZone', zone, zone, `${zone} is not a known time zone`);
  }
  if (rules.maxEntriesPerDay != null) {
    let value = 1;
    for (const { at, count } of facts.entries) if (riskDayKey(at, zone) === today) value += count;
    if (value > rules.maxEntriesPerDay)
      return violation(
        'maxEntriesPerDay',
        rules.maxEntriesPerDay,
        value,
        `this would be entry ${value} of the day ${today}, above the limit`,
      );
  }
  return lossBreach(rules, facts, now);
}
