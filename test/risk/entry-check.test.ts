import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkEntry,
  insideWindow,
  lossBreach,
  type AccountFacts,
  type EntryIntent,
} from '../../src/risk/entry-check.js';
import { riskDayKey } from '../../src/risk/risk-day.js';
import { narrowRiskRules, type EffectiveRiskRules, type RiskRules } from '../../src/risk/risk-rules.js';

const NOW = Date.parse('2026-12-02T10:00:00Z'); // a Wednesday
const entry = (over: Partial<EntryIntent> = {}): EntryIntent => ({
  symbol: 'EURUSD',
  venueSymbol: 'EURUSD',
  side: 'buy',
  lots: 1,
  notional: 100_000,
  ...over,
});
const facts = (over: Partial<AccountFacts> = {}): AccountFacts => ({
  nets: false,
  positions: [],
  entries: [],
  equity: 10_000,
  balance: 10_000,
  dayStartEquity: {},
  ...over,
});
const rules = (over: Partial<EffectiveRiskRules> = {}): EffectiveRiskRules => ({ tradingWindows: [], ...over });
const ruleOf = (r: EffectiveRiskRules, e = entry(), f = facts(), now = NOW) => checkEntry(r, e, f, now)?.rule ?? 'ok';

describe('an entry against each rule, below, at and above its limit', () => {
  it('maxLotsPerOrder', () => {
    const r = rules({ maxLotsPerOrder: 0.3 });
    expect(ruleOf(r, entry({ lots: 0.2 }))).toBe('ok');
    // 0.1 + 0.2 lots reach exactly 0.3: a float sum does not make it above.
    expect(ruleOf(r, entry({ lots: 0.1 + 0.2 }))).toBe('ok');
    const above = checkEntry(r, entry({ lots: 0.31 }), facts(), NOW)!;
    expect(above).toMatchObject({ rule: 'maxLotsPerOrder', limit: 0.3, value: 0.31 });
    expect(above.message).toBe(
      'risk rule maxLotsPerOrder (limit 0.3, value 0.31): the order of 0.31 lots EURUSD is above the limit',
    );
  });

  it('maxNotionalPerOrder, and a notional the agent cannot convert is refused', () => {
    const r = rules({ maxNotionalPerOrder: 50_000 });
    expect(ruleOf(r, entry({ notional: 49_999 }))).toBe('ok');
    expect(ruleOf(r, entry({ notional: 50_000 }))).toBe('ok');
    expect(checkEntry(r, entry({ notional: 50_000.5 }), facts(), NOW)).toMatchObject({
      rule: 'maxNotionalPerOrder',
      value: 50_000.5,
    });
    expect(checkEntry(r, entry({ notional: null }), facts(), NOW)).toMatchObject({ value: 'unknown' });
  });

  it('maxPositionLots counts both sides on a hedging venue and the net on a netting one', () => {
    const r = rules({ maxPositionLots: 2 });
    const held = [
      { symbol: 'EURUSD', side: 'buy' as const, lots: 0.5 },
      { symbol: 'EURUSD', side: 'sell' as const, lots: 0.5 },
      { symbol: 'GBPUSD', side: 'buy' as const, lots: 5 },
    ];
    expect(ruleOf(r, entry({ lots: 0.9 }), facts({ positions: held }))).toBe('ok');
    expect(ruleOf(r, entry({ lots: 1 }), facts({ positions: held }))).toBe('ok');
    expect(checkEntry(r, entry({ lots: 1.1 }), facts({ positions: held }), NOW)).toMatchObject({
      rule: 'maxPositionLots',
      value: 2.1,
    });
    // Netted, the buy and sell cancel out: 1.9 more is 1.9.
    const netted = facts({ nets: true, positions: [{ symbol: 'EURUSD', side: 'buy', lots: 1.5 }] });
    expect(ruleOf(r, entry({ lots: 0.5 }), netted)).toBe('ok');
    expect(ruleOf(r, entry({ lots: 0.6 }), netted)).toBe('maxPositionLots');
    expect(ruleOf(r, entry({ lots: 3.5, side: 'sell' }), netted)).toBe('ok');
    expect(ruleOf(r, entry({ lots: 3.6, side: 'sell' }), netted)).toBe('maxPositionLots');
  });

  it('maxOpenPositions counts the new entry, which adds to the open position on a netting venue', () => {
    const r = rules({ maxOpenPositions: 2 });
    const one = [{ symbol: 'GBPUSD', side: 'buy' as const, lots: 1 }];
    const two = [...one, { symbol: 'EURUSD', side: 'buy' as const, lots: 1 }];
    expect(ruleOf(r, entry(), facts())).toBe('ok');
    expect(ruleOf(r, entry(), facts({ positions: one }))).toBe('ok');
    expect(checkEntry(r, entry(), facts({ positions: two }), NOW)).toMatchObject({
      rule: 'maxOpenPositions',
      value: 3,
    });
    expect(ruleOf(r, entry(), facts({ nets: true, positions: two }))).toBe('ok');
  });

  it('maxEntriesPerDay counts the entries of the rule-zone day', () => {
    const r = rules({ maxEntriesPerDay: 2 });
    const today = [{ at: NOW - 3_600_000, count: 1 }];
    const yesterday = { at: Date.parse('2026-12-01T23:59:00Z'), count: 1 };
    expect(ruleOf(r, entry(), facts({ entries: [yesterday, yesterday] }))).toBe('ok');
    expect(ruleOf(r, entry(), facts({ entries: [...today, yesterday] }))).toBe('ok');
    expect(checkEntry(r, entry(), facts({ entries: [...today, ...today] }), NOW)).toMatchObject({
      rule: 'maxEntriesPerDay',
      limit: 2,
      value: 3,
    });
    // Entries are kept by the minute they left: one minute may hold several.
    expect(checkEntry(r, entry(), facts({ entries: [{ at: NOW - 60_000, count: 2 }] }), NOW)).toMatchObject({
      value: 3,
    });
  });

  it('maxDailyLoss as an amount and as a percent of the day’s starting equity, the tighter holding', () => {
    const key = riskDayKey(NOW, null);
    const start = { [key]: 10_000 };
    const amount = rules({ maxDailyLoss: { amount: 500 } });
    expect(ruleOf(amount, entry(), facts({ dayStartEquity: start, equity: 9_500.01 }))).toBe('ok');
    expect(checkEntry(amount, entry(), facts({ dayStartEquity: start, equity: 9_500 }), NOW)).toMatchObject({
      rule: 'maxDailyLoss',
      value: 500,
    });
    expect(ruleOf(amount, entry(), facts({ dayStartEquity: start, equity: 9_000 }))).toBe('maxDailyLoss');
    const both = rules({ maxDailyLoss: { amount: 500, percent: 3 } });
    expect(ruleOf(both, entry(), facts({ dayStartEquity: start, equity: 9_700.01 }))).toBe('ok');
    expect(ruleOf(both, entry(), facts({ dayStartEquity: start, equity: 9_700 }))).toBe('maxDailyLoss');
    // No start of the day known yet: nothing to measure against.
    expect(ruleOf(amount, entry(), facts({ equity: 1 }))).toBe('ok');
  });

  it('maxTotalLoss below the starting balance', () => {
    const r = rules({ maxTotalLoss: { percent: 10, startingBalance: 10_000 } });
    expect(ruleOf(r, entry(), facts({ equity: 9_000.01 }))).toBe('ok');
    expect(checkEntry(r, entry(), facts({ equity: 9_000 }), NOW)).toMatchObject({ rule: 'maxTotalLoss', value: 1000 });
    expect(ruleOf(r, entry(), facts({ equity: 8_000 }))).toBe('maxTotalLoss');
    expect(lossBreach(r, facts({ equity: 8_000 }), NOW)?.rule).toBe('maxTotalLoss');
  });

  it('tradingWindows: inside, at the edges, outside, and every window must hold', () => {
    const london = {
      timeZone: 'Europe/London',
      days: ['mon', 'tue', 'wed', 'thu', 'fri'] as const,
      from: '07:00',
      until: '21:00',
    };
    const r = rules({ tradingWindows: [{ ...london, days: [...london.days] }] });
    expect(ruleOf(r, entry(), facts(), Date.parse('2026-12-02T06:59:00Z'))).toBe('tradingWindows');
    expect(ruleOf(r, entry(), facts(), Date.parse('2026-12-02T07:00:00Z'))).toBe('ok');
    expect(ruleOf(r, entry(), facts(), Date.parse('2026-12-02T20:59:00Z'))).toBe('ok');
    const late = checkEntry(r, entry(), facts(), Date.parse('2026-12-02T21:00:00Z'))!;
    expect(late).toMatchObject({ rule: 'tradingWindows', value: 'wed 21:00 Europe/London' });
    // A Saturday.
    expect(ruleOf(r, entry(), facts(), Date.parse('2026-12-05T12:00:00Z'))).toBe('tradingWindows');
    const two = rules({
      tradingWindows: [
        { ...london, days: [...london.days] },
        { timeZone: 'America/New_York', days: ['wed'], from: '08:00', until: '17:00' },
      ],
    });
    // 12:00 London is 07:00 New York: the second window does not hold.
    expect(ruleOf(two, entry(), facts(), Date.parse('2026-12-02T12:00:00Z'))).toBe('tradingWindows');
    expect(ruleOf(two, entry(), facts(), Date.parse('2026-12-02T14:00:00Z'))).toBe('ok');
  });

  it('a window whose until is earlier than its from runs past midnight into the next day', () => {
    const night = { timeZone: 'Asia/Tokyo', days: ['fri' as const], from: '22:00', until: '02:00' };
    // Friday 23:00 and Saturday 01:59 Tokyo are inside; Saturday 02:00 and Friday 01:00 are not.
    expect(insideWindow(night, Date.parse('2026-12-04T14:00:00Z'))).toBe(true);
    expect(insideWindow(night, Date.parse('2026-12-04T16:59:00Z'))).toBe(true);
    expect(insideWindow(night, Date.parse('2026-12-04T17:00:00Z'))).toBe(false);
    expect(insideWindow(night, Date.parse('2026-12-03T16:00:00Z'))).toBe(false);
  });

  it('allowedSymbols and refusedSymbols, whatever the case', () => {
    expect(ruleOf(rules({ allowedSymbols: ['eurusd'] }), entry())).toBe('ok');
    expect(ruleOf(rules({ allowedSymbols: ['GBPUSD'] }), entry())).toBe('allowedSymbols');
    expect(ruleOf(rules({ allowedSymbols: [] }), entry())).toBe('allowedSymbols');
    expect(checkEntry(rules({ refusedSymbols: ['EURUSD'] }), entry(), facts(), NOW)).toMatchObject({
      rule: 'refusedSymbols',
      value: 'EURUSD',
    });
  });

  it('an unknown time zone refuses, naming it', () => {
    expect(checkEntry(rules({ dayTimeZone: 'Mars/Olympus' }), entry(), facts(), NOW)).toMatchObject({
      rule: 'dayTimeZone',
      value: 'Mars/Olympus',
    });
  });
});

describe('the day rolls over in the rule’s zone, the instant injected', () => {
  it('entries of the previous New York day stop counting at New York midnight, across the DST change', () => {
    // 2026-03-08 is the spring-forward day in New York (02:00 EST → 03:00 EDT).
    const r = rules({ maxEntriesPerDay: 1, dayTimeZone: 'America/New_York' });
    const saturdayEvening = Date.parse('2026-03-08T03:30:00Z'); // Sat 7th 22:30 EST
    const f = facts({ entries: [{ at: saturdayEvening, count: 1 }] });
    expect(ruleOf(r, entry(), f, Date.parse('2026-03-08T04:59:00Z'))).toBe('maxEntriesPerDay'); // 23:59 EST
    expect(ruleOf(r, entry(), f, Date.parse('2026-03-08T05:00:00Z'))).toBe('ok'); // 00:00 EST on the 8th
    // The 8th has 23 hours: the 9th starts at 04:00 UTC (EDT).
    const sundayLate = facts({ entries: [{ at: Date.parse('2026-03-09T03:30:00Z'), count: 1 }] }); // Sun 8th 23:30 EDT
    expect(ruleOf(r, entry(), sundayLate, Date.parse('2026-03-09T03:59:00Z'))).toBe('maxEntriesPerDay');
    expect(ruleOf(r, entry(), sundayLate, Date.parse('2026-03-09T04:00:00Z'))).toBe('ok');
    // In UTC the same entries are of another day.
    expect(riskDayKey(Date.parse('2026-03-09T03:30:00Z'), null)).toBe('UTC 2026-03-09');
  });

  it('the daily loss measures from the start of the day in the zone; a new day has no start until one is recorded', () => {
    const r = rules({ maxDailyLoss: { amount: 100 }, dayTimeZone: 'Europe/London' });
    // 2026-10-25: London falls back; the day runs from 23:00 UTC on the 24th for 25 hours.
    const evening = Date.parse('2026-10-25T23:30:00Z'); // still the 25th in London (GMT)
    expect(riskDayKey(Date.parse('2026-10-24T23:00:00Z'), 'Europe/London')).toBe('Europe/London 2026-10-25');
    expect(riskDayKey(evening, 'Europe/London')).toBe('Europe/London 2026-10-25');
    const f = facts({ equity: 9_850, dayStartEquity: { 'Europe/London 2026-10-25': 10_000 } });
    expect(ruleOf(r, entry(), f, evening)).toBe('maxDailyLoss');
    expect(ruleOf(r, entry(), f, Date.parse('2026-10-26T00:00:00Z'))).toBe('ok');
  });
});

const limit = fc.double({ min: 0.01, max: 1000, noNaN: true });
const lots = fc.double({ min: 0.01, max: 100, noNaN: true });
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const ruleSet: fc.Arbitrary<RiskRules> = fc.record({
  maxLotsPerOrder: maybe(limit),
  maxNotionalPerOrder: maybe(fc.double({ min: 1, max: 1e7, noNaN: true })),
  maxPositionLots: maybe(limit),
  maxOpenPositions: maybe(fc.integer({ min: 0, max: 10 })),
  maxEntriesPerDay: maybe(fc.integer({ min: 0, max: 10 })),
  maxDailyLoss: maybe(
    fc.record({ amount: maybe(limit), percent: maybe(fc.double({ min: 0, max: 100, noNaN: true })) }),
  ),
  allowedSymbols: maybe(fc.subarray(['EURUSD', 'GBPUSD', 'BTCUSDT'])),
  refusedSymbols: maybe(fc.subarray(['EURUSD', 'GBPUSD', 'BTCUSDT'])),
});
const accountFacts: fc.Arbitrary<AccountFacts> = fc.record({
  nets: fc.boolean(),
  positions: fc.array(
    fc.record({
      symbol: fc.constantFrom('EURUSD', 'GBPUSD'),
      side: fc.constantFrom('buy' as const, 'sell' as const),
      lots,
    }),
    { maxLength: 4 },
  ),
  entries: fc.array(
    fc.record({ at: fc.integer({ min: NOW - 3 * 86_400_000, max: NOW }), count: fc.integer({ min: 1, max: 3 }) }),
    {
      maxLength: 12,
    },
  ),
  equity: fc.double({ min: 0, max: 20_000, noNaN: true }),
  balance: fc.constant(10_000),
  dayStartEquity: fc.constant({ [riskDayKey(NOW, null)]: 10_000 }),
});
const anEntry: fc.Arbitrary<EntryIntent> = fc
  .record({
    symbol: fc.constantFrom('EURUSD', 'GBPUSD', 'BTCUSDT'),
    venueSymbol: fc.constant('EURUSD'),
    side: fc.constantFrom('buy' as const, 'sell' as const),
    lots,
    notional: fc.double({ min: 0, max: 1e7, noNaN: true }),
  })
  .map((e) => ({ ...e, venueSymbol: e.symbol }));

describe('properties', () => {
  it('no rules refuse nothing', () => {
    fc.assert(fc.property(anEntry, accountFacts, (e, f) => checkEntry(rules(), e, f, NOW) === null));
  });

  it('a source only tightens: an entry the narrowed rules allow, the account’s alone allow too', () => {
    fc.assert(
      fc.property(ruleSet, ruleSet, anEntry, accountFacts, (account, source, e, f) => {
        if (checkEntry(narrowRiskRules(account, source), e, f, NOW) !== null) return true;
        return checkEntry(narrowRiskRules(account, null), e, f, NOW) === null;
      }),
    );
  });

  it('a smaller order passes where a larger one of the same side passed', () => {
    fc.assert(
      fc.property(ruleSet, anEntry, accountFacts, fc.double({ min: 0, max: 1, noNaN: true }), (r, e, f, share) => {
        const effective = narrowRiskRules(r, null);
        if (f.nets) return true; // netted, a smaller sell may leave a larger net position
        if (checkEntry(effective, e, f, NOW) !== null) return true;
        const smaller = { ...e, lots: Math.max(0.01, e.lots * share), notional: (e.notional ?? 0) * share };
        return checkEntry(effective, smaller, f, NOW) === null;
      }),
    );
  });

  it('a refusal of a number rule names a value above its limit', () => {
    fc.assert(
      fc.property(ruleSet, anEntry, accountFacts, (r, e, f) => {
        const v = checkEntry(narrowRiskRules(r, null), e, f, NOW);
        if (v === null || typeof v.limit !== 'number' || typeof v.value !== 'number') return true;
        return v.value > v.limit && v.message.includes(v.rule);
      }),
    );
  });

  it('a window past midnight and its complement on every day cover each instant exactly once', () => {
    const every = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
    const clock = fc
      .integer({ min: 0, max: 1439 })
      .map((m) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`);
    fc.assert(
      fc.property(
        clock,
        clock,
        fc.integer({ min: Date.parse('2026-01-01T00:00:00Z'), max: Date.parse('2027-01-01T00:00:00Z') }),
        fc.constantFrom('UTC', 'Europe/London', 'America/New_York', 'Asia/Kolkata'),
        (from, until, at, timeZone) => {
          if (from === until) return true;
          const a = insideWindow({ timeZone, days: [...every], from, until }, at);
          const b = insideWindow({ timeZone, days: [...every], from: until, until: from }, at);
          return a !== b;
        },
      ),
    );
  });
});
