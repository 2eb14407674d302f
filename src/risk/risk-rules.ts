/**
 * The guard rails an account sets, and a source may only tighten. Every field is optional: an
 * absent or null limit does not apply. The server stores an account's and each source's rules,
 * narrows them into one `EffectiveRiskRules` per signal (`narrowRiskRules`) and hands it to the
 * agent with the signal, so a rule changed at 10:00:00 holds for every signal received after that.
 * The agent checks them against the venue's own account before it sends anything; closing and
 * cancelling are never checked.
 */
export interface RiskRules {
  /** The largest order, in lots. */
  maxLotsPerOrder?: number | null;
  /** The largest order's notional (lots × contract size × price), in the account currency. */
  maxNotionalPerOrder?: number | null;
  /** The largest position per symbol, in lots, after the order, netted as the venue nets. */
  maxPositionLots?: number | null;
  /** The most positions open at once (the new entry counted), across symbols. */
  maxOpenPositions?: number | null;
  /** The most entries per day (the day of `dayTimeZone`). */
  maxEntriesPerDay?: number | null;
  /**
   * The largest loss in one day, realized plus unrealized, from the venue's figures: the equity
   * at the day's start (in `dayTimeZone`) minus the equity now. Either an amount in the account
   * currency or a percent of the day's starting equity; both may be set, the tighter holds.
   * Reaching it halts the account.
   */
  maxDailyLoss?: LossLimit | null;
  /**
   * The largest loss overall, prop-firm style: equity may not fall below `startingBalance` minus
   * the limit (the percent is of `startingBalance`). Reaching it halts the account.
   */
  maxTotalLoss?: (LossLimit & { startingBalance: number }) | null;
  /** The IANA time zone whose midnight starts a day for `maxEntriesPerDay` and `maxDailyLoss`; UTC when absent. */
  dayTimeZone?: string | null;
  /** When entries may be opened. */
  tradingWindow?: TradingWindow | null;
  /** Only these symbols may be entered (the signal's symbol, before any agent symbol map). */
  allowedSymbols?: string[] | null;
  /** These symbols may never be entered. */
  refusedSymbols?: string[] | null;
}

export interface LossLimit {
  amount?: number | null;
  percent?: number | null;
}

export type Weekday = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';

/** For example Mon–Fri 07:00–21:00 Europe/London: `{ timeZone: 'Europe/London', days: ['mon', …, 'fri'], from: '07:00', until: '21:00' }`. */
export interface TradingWindow {
  /** IANA time zone name. */
  timeZone: string;
  days: Weekday[];
  /** 'HH:MM', inclusive. */
  from: string;
  /** 'HH:MM', exclusive; earlier than `from` means the window runs past midnight into the next day. */
  until: string;
}

/**
 * An account's rules narrowed by a source's: numbers take the smaller, loss limits each part the
 * smaller, symbol lists intersect (allowed) or join (refused), and every trading window must hold.
 */
export interface EffectiveRiskRules extends Omit<RiskRules, 'tradingWindow'> {
  tradingWindows: TradingWindow[];
}

const NUMBER_RULES = [
  'maxLotsPerOrder',
  'maxNotionalPerOrder',
  'maxPositionLots',
  'maxOpenPositions',
  'maxEntriesPerDay',
] as const;

function smaller(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a == null) return b ?? null;
  if (b == null) return a;
  return Math.min(a, b);
}

function narrowLoss(a: LossLimit | null | undefined, b: LossLimit | null | undefined): LossLimit | null {
  if (!a) return b ?? null;
  if (!b) return a;
  return { amount: smaller(a.amount, b.amount), percent: smaller(a.percent, b.percent) };
}

/** The rules a signal from `source` must keep on `account`'s agents. Pure. */
export function narrowRiskRules(account: RiskRules | null, source: RiskRules | null): EffectiveRiskRules {
  const a = account ?? {};
  const s = source ?? {};
  const rules: EffectiveRiskRules = { tradingWindows: [] };
  for (const name of NUMBER_RULES) {
    const value = smaller(a[name], s[name]);
    if (value !== null) rules[name] = value;
  }
  const daily = narrowLoss(a.maxDailyLoss, s.maxDailyLoss);
  if (daily) rules.maxDailyLoss = daily;
  // A source cannot move the account's reference balance; it may only lower the limit.
  const total = a.maxTotalLoss ? { ...a.maxTotalLoss, ...narrowLoss(a.maxTotalLoss, s.maxTotalLoss) } : null;
  if (total) rules.maxTotalLoss = total;
  const zone = a.dayTimeZone ?? s.dayTimeZone ?? null;
  if (zone) rules.dayTimeZone = zone;
  rules.tradingWindows = [a.tradingWindow, s.tradingWindow].filter((w): w is TradingWindow => !!w);
  if (a.allowedSymbols && s.allowedSymbols) {
    const mine = new Set(s.allowedSymbols);
    rules.allowedSymbols = a.allowedSymbols.filter((symbol) => mine.has(symbol));
  } else if (a.allowedSymbols ?? s.allowedSymbols) {
    rules.allowedSymbols = a.allowedSymbols ?? s.allowedSymbols;
  }
  const refused = [...new Set([...(a.refusedSymbols ?? []), ...(s.refusedSymbols ?? [])])];
  if (refused.length > 0) rules.refusedSymbols = refused;
  return rules;
}
