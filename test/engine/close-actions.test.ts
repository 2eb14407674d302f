import { describe, expect, it } from 'vitest';
import { lots, pips, rejection, sig, simulation } from './simulation.js';

/** EURUSD at 1.10000/1.10020 with: 1 buy 1 lot "Alpha", 2 buy 0.3 "beta", 3 sell 1 lot, 4 GBPUSD buy 1 lot; then EURUSD at 1.10100/1.10120. */
function book() {
  const sim = simulation();
  sim.tick('EURUSD', 1.1, 1.1002);
  sim.tick('GBPUSD', 1.25, 1.2502);
  sim.signal(sig('EURUSD', 'buy', { volume: lots(1), comment: 'Alpha' }));
  sim.signal(sig('EURUSD', 'buy', { volume: lots(0.3), comment: 'beta' }));
  sim.signal(sig('EURUSD', 'sell', { volume: lots(1) }));
  sim.signal(sig('GBPUSD', 'buy', { volume: lots(1) }));
  sim.tick('EURUSD', 1.101, 1.1012);
  return sim;
}

const closedTickets = (events: readonly { type: string }[]) =>
  events.filter((e) => e.type === 'closed').map((e) => (e as unknown as { position: number }).position);

describe('close actions', () => {
  it("closebuy closes the symbol's buys, at the bid", () => {
    const sim = book();
    const { events } = sim.signal(sig('EURUSD', 'closebuy'));
    // position 1: (1.10100 − 1.10020) × 1 × 100000 = 80.00; position 2: × 0.3 = 24.00
    expect(events).toEqual([
      { type: 'closed', time: 8, position: 1, volume: 1, price: 1.101, profit: 80, reason: 'signal' },
      { type: 'closed', time: 8, position: 2, volume: 0.3, price: 1.101, profit: 24, reason: 'signal' },
    ]);
    expect(sim.state.positions.map((p) => p.ticket)).toEqual([3, 4]);
  });

  it('closesell closes the sells at the ask; closeall both sides of that symbol only', () => {
    const sim = book();
    // position 3: (1.10000 − 1.10120) × 100000 = −120.00
    expect(sim.signal(sig('EURUSD', 'closesell')).events).toEqual([
      expect.objectContaining({ position: 3, price: 1.1012, profit: -120 }),
    ]);
    const again = book();
    expect(closedTickets(again.signal(sig('EURUSD', 'closeall')).events)).toEqual([1, 2, 3]);
    expect(again.state.positions.map((p) => p.ticket)).toEqual([4]);
  });

  it('filters by comment, case-insensitively', () => {
    const sim = book();
    expect(closedTickets(sim.signal(sig('EURUSD', 'closeall', { comment: 'ALPHA' })).events)).toEqual([1]);
    expect(closedTickets(sim.signal(sig('EURUSD', 'closebuy', { comment: 'Beta' })).events)).toEqual([2]);
  });

  it('pct closes that share of each matching position', () => {
    // 50% of 1 lot = 0.5; 50% of 0.3 = 0.15
    const sim = book();
    const { events } = sim.signal(sig('EURUSD', 'closebuy', { close: { pct: 50 } }));
    expect(events).toEqual([
      { type: 'partial_close', time: 8, position: 1, volume: 0.5, price: 1.101, profit: 40 },
      { type: 'partial_close', time: 8, position: 2, volume: 0.15, price: 1.101, profit: 12 },
    ]);
    expect(sim.state.positions.map((p) => [p.ticket, p.volume])).toEqual([
      [1, 0.5],
      [2, 0.15],
      [3, 1],
      [4, 1],
    ]);
  });

  it('pct_lots closes that many lots, oldest position first', () => {
    // 1.1 lots: all of position 1 (1 lot), then 0.1 of position 2
    const sim = book();
    expect(sim.signal(sig('EURUSD', 'closebuy', { close: { lots: 1.1 } })).events).toEqual([
      expect.objectContaining({ type: 'closed', position: 1, volume: 1 }),
      expect.objectContaining({ type: 'partial_close', position: 2, volume: 0.1 }),
    ]);
    // more lots than are open closes them all
    expect(sim.signal(sig('EURUSD', 'closeall', { close: { lots: 50 } })).events.map((e) => e.type)).toEqual([
      'closed',
      'closed',
    ]);
  });

  it('a share that would leave less than the minimum lot closes the whole position', () => {
    // lot minimum 0.1: 0.3 lots, 70% = 0.21 would leave 0.09 → all 0.3 close
    const sim = simulation({ instruments: { EURUSD: { lotMin: 0.1 } } });
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'buy', { volume: lots(0.3) }));
    expect(sim.signal(sig('EURUSD', 'closeall', { close: { pct: 70 } })).events).toEqual([
      expect.objectContaining({ type: 'closed', volume: 0.3, reason: 'signal' }),
    ]);
  });

  it('rejects when there is nothing to close, or the share is below the minimum lot', () => {
    const sim = book();
    expect(rejection(sim.signal(sig('EURUSD', 'closebuy', { comment: 'gamma' })).events)).toBe(
      'there are no open buy positions on EURUSD with comment "gamma" to close',
    );
    expect(rejection(sim.signal(sig('USDJPY', 'closeall')).events)).toBe(
      'there are no open positions on USDJPY to close',
    );
    // 0.5% of 1 lot = 0.005 and of 0.3 = 0.0015: both below 0.01
    expect(rejection(sim.signal(sig('EURUSD', 'closebuy', { close: { pct: 0.5 } })).events)).toBe(
      'the amount to close is below the minimum of 0.01 lots for every matching position; nothing was closed',
    );
  });
});

describe('exop and exent', () => {
  it('exop closes the opposite positions and opens nothing', () => {
    const sim = book();
    const { events, outcome } = sim.signal(sig('EURUSD', 'buy', { volume: lots(1), opposite: 'exit' }));
    expect(events).toEqual([expect.objectContaining({ type: 'closed', position: 3, reason: 'opposite' })]);
    expect(outcome.status).toBe('executed');
    expect(sim.state.positions.map((p) => p.ticket)).toEqual([1, 2, 4]);
  });

  it('exop with no opposite position is rejected', () => {
    const sim = book();
    expect(rejection(sim.signal(sig('GBPUSD', 'buy', { opposite: 'exit' })).events)).toBe(
      'there are no open sell positions on GBPUSD to exit (exop opens nothing)',
    );
  });

  it('exent closes the opposite positions with the same comment filter, then opens', () => {
    const sim = book();
    const { events } = sim.signal(
      sig('EURUSD', 'sell', { volume: lots(0.2), opposite: 'exit_and_enter', comment: 'alpha' }),
    );
    expect(events).toEqual([
      expect.objectContaining({ type: 'closed', position: 1, reason: 'opposite' }),
      expect.objectContaining({ type: 'opened', position: 5, side: 'sell', volume: 0.2, comment: 'alpha' }),
    ]);
  });

  it('a rejected exent closes nothing', () => {
    const sim = book();
    const before = sim.state;
    // a sell's stop 20 pips below the fill is on the wrong side
    const result = sim.signal(
      sig('EURUSD', 'sell', { volume: lots(1), opposite: 'exit_and_enter', sl: { type: 'price', value: 1.09 } }),
    );
    expect(result.outcome).toEqual({
      status: 'rejected',
      message: 'the stop loss 1.09000 of a sell must be above the current ask 1.10120',
    });
    expect(result.events.map((e) => e.type)).toEqual(['rejected']);
    expect(sim.state).toBe(before);
  });
});

describe('close-then-open actions', () => {
  it.each([
    ['closelongbuy', 'buy', [1, 2]],
    ['closelongsell', 'sell', [1, 2]],
    ['closeshortbuy', 'buy', [3]],
    ['closeshortsell', 'sell', [3]],
  ] as const)('%s closes the %s side first, then opens a %s', (action, side, closed) => {
    const sim = book();
    const { events } = sim.signal(sig('EURUSD', action, { volume: lots(0.1), sl: pips(30) }));
    expect(closedTickets(events)).toEqual(closed);
    expect(events.filter((e) => e.type === 'closed').every((e) => e.type === 'closed' && e.reason === 'signal')).toBe(
      true,
    );
    expect(events.at(-1)).toMatchObject({ type: 'opened', position: 5, side, volume: 0.1 });
  });

  it('with the comment filter, and opening even when nothing matched', () => {
    const sim = book();
    const { events } = sim.signal(sig('EURUSD', 'closelongsell', { volume: lots(0.1), comment: 'nobody' }));
    expect(events).toEqual([expect.objectContaining({ type: 'opened', side: 'sell', comment: 'nobody' })]);
  });

  it('sizing after the close uses the balance the close left', () => {
    // buy 1 lot at 1.10020; bid 1.12020 → closelongbuy realizes +2000.00 → balance 12000;
    // 100% of 12000 at ask 1.12040: 12000 / 112040 = 0.1071 → 0.10 (on the old 10000 it would be 0.08)
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'buy', { volume: lots(1) }));
    sim.tick('EURUSD', 1.1202, 1.1204);
    const { events } = sim.signal(sig('EURUSD', 'closelongbuy', { volume: { type: 'pctbal', value: 100 } }));
    expect(events).toEqual([
      expect.objectContaining({ type: 'closed', profit: 2000 }),
      expect.objectContaining({ type: 'opened', volume: 0.1 }),
    ]);
  });
});
