import { ErrorCode, type Problem } from '../errors/catalog.js';
import { unknownNames } from '../errors/unknown-names.js';
import type { LossLimit, RiskRules, TradingWindow, Weekday } from './risk-rules.js';

/** The fields of `RiskRules`, in the order the API documents them. */
export const RISK_RULE_NAMES = [
  'maxLotsPerOrder',
  'maxNotionalPerOrder',
  'maxPositionLots',
  'maxOpenPositions',
  'maxEntriesPerDay',
  'maxDailyLoss',
  'maxTotalLoss',
  'dayTimeZone',
  'tradingWindow',
  'allowedSymbols',
  'refusedSymbols',
] as const;

export const WEEKDAYS: readonly Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
/** The most symbols a list may hold. */
export const MAX_SYMBOLS = 500;
/** The largest count a count limit may be. */
export const MAX_COUNT = 1_000_000;

const CLOCK = /^([01]\d|2[0-3]):[0-5]\d$/;

/**
 * Reads a body of risk rules: every problem at once, each naming its field (`maxDailyLoss.percent`)
 * and what to send instead; unknown fields refused. Absent and null both mean "no such limit".
 * Pure: a time zone is checked against the IANA names the runtime knows, nothing else is read.
 */
export function readRiskRules(body: unknown): { ok: true; rules: RiskRules } | { ok: false; problems: Problem[] } {
  const problems: Problem[] = [];
  const fail = (param: string, detail: string) => problems.push({ code: ErrorCode.INVALID_FIELD, param, detail });
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return {
      ok: false,
      problems: [{ code: ErrorCode.INVALID_REQUEST, detail: 'the request body must be a JSON object of risk rules' }],
    };
  }
  const given = body as Record<string, unknown>;
  problems.push(...unknownNames(Object.keys(given), RISK_RULE_NAMES, 'field'));
  const rules: RiskRules = {};

  const positive = (name: 'maxLotsPerOrder' | 'maxNotionalPerOrder' | 'maxPositionLots') => {
    const value = given[name];
    if (value === undefined || value === null) return;
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
      fail(name, `'${name}' must be a number above 0, or null for no limit`);
    } else rules[name] = value;
  };
  positive('maxLotsPerOrder');
  positive('maxNotionalPerOrder');
  positive('maxPositionLots');
  for (const name of ['maxOpenPositions', 'maxEntriesPerDay'] as const) {
    const value = given[name];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_COUNT) {
      fail(name, `'${name}' must be a whole number from 0 to ${MAX_COUNT}, or null for no limit`);
    } else rules[name] = value;
  }

  const loss = (name: string, value: unknown, extra: string[]): LossLimit | null => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      fail(name, `'${name}' must be an object with amount (account currency) or percent or both, or null`);
      return null;
    }
    const fields = value as Record<string, unknown>;
    for (const problem of unknownNames(Object.keys(fields), ['amount', 'percent', ...extra], 'field')) {
      fail(`${name}.${problem.param}`, problem.detail);
    }
    const limit: LossLimit = {};
    if (fields.amount !== undefined && fields.amount !== null) {
      if (typeof fields.amount !== 'number' || !Number.isFinite(fields.amount) || fields.amount <= 0) {
        fail(`${name}.amount`, `'${name}.amount' must be an amount above 0 in the account currency`);
      } else limit.amount = fields.amount;
    }
    if (fields.percent !== undefined && fields.percent !== null) {
      if (typeof fields.percent !== 'number' || !(fields.percent > 0 && fields.percent <= 100)) {
        fail(`${name}.percent`, `'${name}.percent' must be a percentage above 0 and at most 100, e.g. 5`);
      } else limit.percent = fields.percent;
    }
    if (fields.amount == null && fields.percent == null) {
      fail(name, `'${name}' needs amount or percent (or both: the tighter holds)`);
    }
    return limit;
  };
  if (given.maxDailyLoss != null) {
    const limit = loss('maxDailyLoss', given.maxDailyLoss, []);
    if (limit) rules.maxDailyLoss = limit;
  }
  if (given.maxTotalLoss != null) {
    const limit = loss('maxTotalLoss', given.maxTotalLoss, ['startingBalance']);
    const balance = (given.maxTotalLoss as Record<string, unknown> | null)?.startingBalance;
    if (limit) {
      if (typeof balance !== 'number' || !Number.isFinite(balance) || balance <= 0) {
        fail(
          'maxTotalLoss.startingBalance',
          "'maxTotalLoss.startingBalance' is required: the balance the loss is counted from (and the percent of), above 0",
        );
      } else rules.maxTotalLoss = { ...limit, startingBalance: balance };
    }
  }

  if (given.dayTimeZone != null) {
    if (!isTimeZone(given.dayTimeZone)) {
      fail('dayTimeZone', "'dayTimeZone' must be an IANA time zone name, e.g. Europe/London or UTC");
    } else rules.dayTimeZone = given.dayTimeZone;
  }
  if (given.tradingWindow != null) {
    const window = readWindow(given.tradingWindow, fail);
    if (window) rules.tradingWindow = window;
  }
  for (const name of ['allowedSymbols', 'refusedSymbols'] as const) {
    const value = given[name];
    if (value === undefined || value === null) continue;
    if (
      !Array.isArray(value) ||
      value.length > MAX_SYMBOLS ||
      !value.every((symbol) => typeof symbol === 'string' && /^\S{1,64}$/.test(symbol))
    ) {
      fail(name, `'${name}' must be a list of at most ${MAX_SYMBOLS} symbols (no spaces), e.g. ["EURUSD", "XAUUSD"]`);
    } else rules[name] = [...new Set(value as string[])];
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, rules };
}

function readWindow(value: unknown, fail: (param: string, detail: string) => void): TradingWindow | null {
  const example =
    'e.g. {"timeZone": "Europe/London", "days": ["mon","tue","wed","thu","fri"], "from": "07:00", "until": "21:00"}';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail('tradingWindow', `'tradingWindow' must be an object, ${example}`);
    return null;
  }
  const fields = value as Record<string, unknown>;
  const before = { count: 0 };
  const note = (param: string, detail: string) => {
    before.count++;
    fail(param, detail);
  };
  for (const problem of unknownNames(Object.keys(fields), ['timeZone', 'days', 'from', 'until'], 'field')) {
    note(`tradingWindow.${problem.param}`, problem.detail);
  }
  if (!isTimeZone(fields.timeZone)) {
    note('tradingWindow.timeZone', "'tradingWindow.timeZone' must be an IANA time zone name, e.g. Europe/London");
  }
  const days = fields.days;
  if (
    !Array.isArray(days) ||
    days.length === 0 ||
    !days.every((day) => typeof day === 'string' && (WEEKDAYS as readonly string[]).includes(day))
  ) {
    note('tradingWindow.days', `'tradingWindow.days' must be a non-empty list of ${WEEKDAYS.join(', ')}`);
  }
  for (const name of ['from', 'until'] as const) {
    if (typeof fields[name] !== 'string' || !CLOCK.test(fields[name])) {
      note(`tradingWindow.${name}`, `'tradingWindow.${name}' must be a time of day HH:MM (00:00 to 23:59), ${example}`);
    }
  }
  if (before.count === 0 && fields.from === fields.until) {
    note(
      'tradingWindow.until',
      "'tradingWindow.until' must differ from 'from' (an empty window would refuse every entry)",
    );
  }
  if (before.count > 0) return null;
  return {
    timeZone: fields.timeZone as string,
    days: WEEKDAYS.filter((day) => (days as string[]).includes(day)),
    from: fields.from as string,
    until: fields.until as string,
  };
}

function isTimeZone(value: unknown): value is string {
  if (typeof value !== 'string' || value === '' || value.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}
