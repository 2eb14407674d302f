import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyToTracker,
  track,
  type OrderTracker,
  type OrderUpdate,
  type TrackedOrder,
  type TrackerEffect,
} from '../../src/agent/order-tracker.js';

const entry: TrackedOrder = {
  clientId: 'sg0000000000000000o',
  venueId: '7',
  role: 'entry',
  symbol: 'BTC/USDT:USDT',
  volume: 0.1,
  filled: 0,
  average: null,
  status: 'open',
};

/**
 * The reports a venue gives of one order filled in steps: each is the order as it stood after
 * a fill (cumulative lots and average, FIX's CumQty and AvgPx, CCXT's filled and average), the
 * last one ended (filled, or cancelled or expired with the rest).
 */
const reports = fc
  .record({
    fills: fc.array(fc.record({ lots: fc.integer({ min: 1, max: 5 }), price: fc.integer({ min: 900, max: 1100 }) }), {
      minLength: 1,
      maxLength: 6,
    }),
    end: fc.constantFrom<OrderUpdate['status']>('filled', 'cancelled', 'expired', 'partially_filled'),
  })
  .map(({ fills, end }) => {
    let lots = 0;
    let cost = 0;
    const updates: OrderUpdate[] = [{ status: 'new', filled: 0, average: null, last: null }];
    fills.forEach((fill, i) => {
      lots += fill.lots;
      cost += fill.lots * fill.price;
      const last = i === fills.length - 1;
      updates.push({
        status: last ? (end === 'filled' ? 'filled' : end) : 'partially_filled',
        filled: lots / 100,
        average: cost / lots,
        last: { price: fill.price, volume: fill.lots / 100 },
      });
    });
    return { updates, volume: end === 'filled' ? lots / 100 : lots / 100 + 0.05, lots: lots / 100, cost: cost / 100 };
  });

function run(order: TrackedOrder, updates: OrderUpdate[]): { tracker: OrderTracker; effects: TrackerEffect[] } {
  let tracker = track({}, order);
  const effects: TrackerEffect[] = [];
  for (const update of updates) {
    const step = applyToTracker(tracker, order.venueId, update);
    tracker = step.tracker;
    effects.push(...step.effects);
  }
  return { tracker, effects };
}

const filledBy = (effects: TrackerEffect[]) =>
  effects.reduce((sum, e) => sum + (e.type === 'entry_fill' ? e.lots : 0), 0);

describe('the order tracker', () => {
  it('cumulative filled lots never go down, whatever order the reports come in', () => {
    fc.assert(
      fc.property(
        reports.chain((r) => fc.tuple(fc.constant(r), fc.shuffledSubarray(r.updates, { minLength: 1 }))),
        ([r, shuffled]) => {
          let tracker = track({}, { ...entry, volume: r.volume });
          let before = 0;
          for (const update of shuffled) {
            tracker = applyToTracker(tracker, entry.venueId, update).tracker;
            expect(tracker[entry.venueId]!.filled).toBeGreaterThanOrEqual(before);
            before = tracker[entry.venueId]!.filled;
          }
        },
      ),
    );
  });

  it('a report applied twice changes nothing the second time', () => {
    fc.assert(
      fc.property(reports, fc.nat(), ({ updates, volume }, pick) => {
        const order = { ...entry, volume };
        const once = run(order, updates.slice(0, (pick % updates.length) + 1));
        const again = applyToTracker(once.tracker, entry.venueId, updates[pick % updates.length]!);
        expect(again.effects).toEqual([]);
        expect(again.tracker).toBe(once.tracker);
      }),
    );
  });

  it('duplicated reports in any order end in the same order, and the fills add up to what filled, at its average', () => {
    fc.assert(
      fc.property(
        reports.chain((r) =>
          fc.tuple(
            fc.constant(r),
            fc
              .array(fc.nat({ max: r.updates.length - 1 }), { maxLength: 12 })
              .chain((extra) => fc.shuffledSubarray([...r.updates, ...extra.map((i) => r.updates[i]!)])),
          ),
        ),
        ([r, shuffled]) => {
          const order = { ...entry, volume: r.volume };
          const inOrder = run(order, r.updates);
          // Every report at least once, in any order, some twice.
          const scrambled = run(order, [...shuffled, ...r.updates.filter((u) => !shuffled.includes(u))]);
          const a = inOrder.tracker[entry.venueId]!;
          const b = scrambled.tracker[entry.venueId]!;
          expect(b.filled).toBe(a.filled);
          expect(b.status).toBe(a.status);
          expect(b.average).toBeCloseTo(a.average!, 6);
          expect(filledBy(scrambled.effects)).toBeCloseTo(r.lots, 8);
          const paid = scrambled.effects.reduce((sum, e) => sum + (e.type === 'entry_fill' ? e.lots * e.price : 0), 0);
          expect(paid).toBeCloseTo(r.cost, 6);
          expect(scrambled.effects.filter((e) => e.type === 'ended')).toHaveLength(a.status === 'open' ? 0 : 1);
        },
      ),
    );
  });

  it('an entry filled in part and still working says so; its cancel keeps the lots that filled', () => {
    const { effects, tracker } = run(entry, [
      { status: 'partially_filled', filled: 0.04, average: 1000, last: null },
      { status: 'cancelled', filled: 0.04, average: 1000, last: null, reason: 'cancelled by the agent' },
    ]);
    expect(effects).toMatchObject([
      { type: 'entry_fill', lots: 0.04, price: 1000, working: true },
      { type: 'ended', order: { status: 'cancelled', filled: 0.04, reason: 'cancelled by the agent' } },
    ]);
    expect(tracker[entry.venueId]).toMatchObject({ filled: 0.04, status: 'cancelled' });
  });

  it('a fill reported after the cancel that crossed it still counts (a cancel is no fill)', () => {
    const { effects } = run(entry, [
      { status: 'cancelled', filled: 0.04, average: 1000, last: null },
      { status: 'partially_filled', filled: 0.06, average: 1010, last: null },
    ]);
    expect(effects.map((e) => e.type)).toEqual(['entry_fill', 'ended', 'entry_fill']);
    expect(effects[2]).toMatchObject({ lots: 0.02, price: 1030, working: false });
  });

  it('a bust takes lots back once; a stop fill is an exit', () => {
    const stop: TrackedOrder = { ...entry, venueId: '8', role: 'stop', volume: 0.04 };
    let tracker = track({}, stop);
    const fill = applyToTracker(tracker, '8', {
      status: 'filled',
      filled: 0.04,
      average: 990,
      last: { price: 990, volume: 0.04 },
    });
    expect(fill.effects).toMatchObject([{ type: 'exit_fill', lots: 0.04, price: 990 }, { type: 'ended' }]);
    tracker = fill.tracker;
    const bust = applyToTracker(tracker, '8', { status: 'busted', filled: 0, average: null, last: null });
    expect(bust.effects).toMatchObject([{ type: 'bust', lots: 0.04 }]);
    expect(
      applyToTracker(bust.tracker, '8', { status: 'busted', filled: 0, average: null, last: null }).effects,
    ).toEqual([]);
  });

  it('an order not followed changes nothing', () => {
    const tracker = track({}, entry);
    const step = applyToTracker(tracker, '99', { status: 'filled', filled: 1, average: 1, last: null });
    expect(step).toEqual({ tracker, effects: [] });
  });
});
