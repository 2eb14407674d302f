import { describe, expect, it } from 'vitest';
import { lots, percent, pips, price, rejection, sig, simulation, tp } from './simulation.js';

const volume = (type: 'pctbal_loss', value: number) => ({ type, value });

describe('placing pending orders', () => {
  it('a buy limit in pips is measured below the current ask', () => {
    // ask 1.10020 − 20 pips = 1.09820
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    expect(
      sim.signal(sig('EURUSD', 'buylimit', { volume: lots(0.5), entry: pips(20), comment: 'dip' })).events,
    ).toEqual([
      {
        type: 'order_placed',
        time: 2,
        order: 1,
        symbol: 'EURUSD',
        side: 'buy',
        kind: 'limit',
        volume: 0.5,
        price: 1.0982,
        comment: 'dip',
      },
    ]);
  });

  it('a sell limit in percent is measured above the current bid', () => {
    // bid 1.10000 × 1.01 = 1.11100
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    expect(sim.signal(sig('EURUSD', 'selllimit', { volume: lots(1), entry: percent(1) })).events[0]).toMatchObject({
      side: 'sell',
      kind: 'limit',
      price: 1.111,
    });
  });

  it('a sell stop in pips is below the bid, a buy stop above the ask', () => {
    const sim = simulation();
    sim.tick('USDJPY', 150.0, 150.02);
    // bid 150.00 − 30 × 0.01 = 149.70; ask 150.02 + 30 × 0.01 = 150.32
    expect(sim.signal(sig('USDJPY', 'sellstop', { volume: lots(1), entry: pips(30) })).events[0]).toMatchObject({
      price: 149.7,
    });
    expect(sim.signal(sig('USDJPY', 'buystop', { volume: lots(1), entry: pips(30) })).events[0]).toMatchObject({
      price: 150.32,
    });
  });

  it('rejects an entry on the wrong side of the price', () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    expect(rejection(sim.signal(sig('EURUSD', 'buylimit', { volume: lots(1), entry: price(1.101) })).events)).toBe(
      'the entry 1.10100 of a buy limit must be below the current ask 1.10020',
    );
    expect(rejection(sim.signal(sig('EURUSD', 'sellstop', { volume: lots(1), entry: price(1.1005) })).events)).toBe(
      'the entry 1.10050 of a sell stop must be below the current bid 1.10000',
    );
    // at the price itself it would fill at once: not a pending order
    expect(rejection(sim.signal(sig('EURUSD', 'buystop', { volume: lots(1), entry: price(1.1002) })).events)).toBe(
      'the entry 1.10020 of a buy stop must be above the current ask 1.10020',
    );
    expect(sim.state.orders).toEqual([]);
  });

  it('measures the stop and target from the entry, and rejects a stop beyond it', () => {
    // buy limit at 1.09820: SL 20 pips → 1.09620, TP 40 pips → 1.10220
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'buylimit', { volume: lots(1), entry: pips(20), sl: pips(20), tp: tp(pips(40)) }));
    expect(sim.summary().orders).toEqual([
      { order: 1, symbol: 'EURUSD', side: 'buy', kind: 'limit', volume: 1, price: 1.0982, sl: 1.0962, comment: null },
    ]);
    expect(
      rejection(
        sim.signal(sig('EURUSD', 'buylimit', { volume: lots(1), entry: price(1.0982), sl: price(1.099) })).events,
      ),
    ).toBe('the stop loss 1.09900 of a buy must be below the entry 1.09820');
  });

  it('sizes the volume when placed, at the entry price', () => {
    // 1% of 10000 = 100 USD; entry 1.09820, SL 1.09620: 200 USD per lot → 0.5 lots, kept after the balance changes
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'buylimit', { volume: volume('pctbal_loss', 1), entry: pips(20), sl: pips(20) }));
    sim.signal(sig('EURUSD', 'sell', { volume: lots(1) }));
    sim.tick('EURUSD', 1.1098, 1.11);
    sim.signal(sig('EURUSD', 'closesell')); // −1000.00
    sim.tick('EURUSD', 1.098, 1.0982);
    expect(sim.of('opened').at(-1)).toMatchObject({ volume: 0.5, price: 1.0982 });
  });

  it('rejects an order when the symbol has no price yet', () => {
    const sim = simulation();
    expect(rejection(sim.signal(sig('EURUSD', 'buylimit', { volume: lots(1), entry: price(1.09) })).events)).toBe(
      'there is no price for EURUSD yet',
    );
  });
});

describe('pending orders fill on touch', () => {
  it('a buy limit fills when the ask falls to the entry, at that ask', () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'buylimit', { volume: lots(1), entry: pips(20), sl: pips(20), tp: tp(pips(40)) }));
    expect(sim.tick('EURUSD', 1.0981, 1.0983)).toEqual([]);
    expect(sim.tick('EURUSD', 1.098, 1.0982)).toEqual([
      { type: 'order_filled', time: 4, order: 1, position: 2, price: 1.0982 },
      {
        type: 'opened',
        time: 4,
        position: 2,
        symbol: 'EURUSD',
        side: 'buy',
        volume: 1,
        price: 1.0982,
        sl: 1.0962,
        tp: 1.1022,
        comment: null,
      },
    ]);
    expect(sim.state.orders).toEqual([]);
  });

  it('a buy stop fills when the ask rises to the entry; a gap fills at the gapped ask', () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'buystop', { volume: lots(1), entry: price(1.102) }));
    expect(sim.tick('EURUSD', 1.1017, 1.1019)).toEqual([]);
    expect(sim.tick('EURUSD', 1.1028, 1.103)).toEqual([
      expect.objectContaining({ type: 'order_filled', price: 1.103 }),
      expect.objectContaining({ type: 'opened', price: 1.103 }),
    ]);
  });

  it('a sell limit fills when the bid rises to the entry, a sell stop when it falls to it', () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'selllimit', { volume: lots(1), entry: price(1.101) }));
    sim.signal(sig('EURUSD', 'sellstop', { volume: lots(1), entry: price(1.099) }));
    expect(sim.tick('EURUSD', 1.101, 1.1012)).toEqual([
      expect.objectContaining({ type: 'order_filled', order: 1, price: 1.101 }),
      expect.objectContaining({ type: 'opened', side: 'sell' }),
    ]);
    // the bid gaps through the sell stop's 1.09900 to 1.09850
    expect(sim.tick('EURUSD', 1.0985, 1.0987)).toEqual([
      expect.objectContaining({ type: 'order_filled', order: 2, price: 1.0985 }),
      expect.objectContaining({ type: 'opened', side: 'sell', price: 1.0985 }),
    ]);
  });

  it('a gap through the entry and the stop fills and stops out on the same tick', () => {
    // buy limit 1.09820 with SL 1.09620; the ask gaps to 1.09520 (bid 1.09500):
    // filled at 1.09520, stopped at the bid 1.09500: −0.0002 × 100000 = −20.00
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'buylimit', { volume: lots(1), entry: pips(20), sl: pips(20) }));
    expect(sim.tick('EURUSD', 1.095, 1.0952).map((e) => e.type)).toEqual(['order_filled', 'opened', 'closed']);
    expect(sim.of('closed')[0]).toMatchObject({ price: 1.095, profit: -20, reason: 'sl' });
  });

  it('a filled order brings its trailing and breakeven rules to the position', () => {
    // buy stop 1.10200 with breakeven trigger 10: filled at 1.10200, bid 1.10300 → SL 1.10200
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(
      sig('EURUSD', 'buystop', { volume: lots(1), entry: price(1.102), breakeven: { trigger: 10, offset: 0 } }),
    );
    sim.tick('EURUSD', 1.1018, 1.102);
    expect(sim.tick('EURUSD', 1.103, 1.1032)).toEqual([
      expect.objectContaining({ type: 'sl_moved', sl: 1.102, reason: 'breakeven' }),
    ]);
  });
});

describe('cancelling pending orders', () => {
  it("cancellong cancels the symbol's pending buys only", () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.tick('GBPUSD', 1.25, 1.2502);
    sim.signal(sig('EURUSD', 'buylimit', { volume: lots(1), entry: pips(20) })); // order 1
    sim.signal(sig('EURUSD', 'buystop', { volume: lots(1), entry: pips(20) })); // order 2
    sim.signal(sig('EURUSD', 'selllimit', { volume: lots(1), entry: pips(20) })); // order 3
    sim.signal(sig('GBPUSD', 'buylimit', { volume: lots(1), entry: pips(20) })); // order 4
    expect(sim.signal(sig('EURUSD', 'cancellong')).events).toEqual([
      { type: 'order_cancelled', time: 7, order: 1, reason: 'signal' },
      { type: 'order_cancelled', time: 7, order: 2, reason: 'signal' },
    ]);
    expect(sim.state.orders.map((o) => o.ticket)).toEqual([3, 4]);
  });

  it('cancelshort honours the comment filter, and with nothing to cancel is rejected', () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'selllimit', { volume: lots(1), entry: pips(20), comment: 'A' }));
    sim.signal(sig('EURUSD', 'sellstop', { volume: lots(1), entry: pips(20), comment: 'B' }));
    expect(sim.signal(sig('EURUSD', 'cancelshort', { comment: 'b' })).events).toEqual([
      expect.objectContaining({ order: 2 }),
    ]);
    expect(rejection(sim.signal(sig('EURUSD', 'cancelshort', { comment: 'B' })).events)).toBe(
      'there are no pending sell orders on EURUSD with comment "B" to cancel',
    );
    // a cancelled order never fills
    expect(sim.tick('EURUSD', 1.09, 1.0902)).toEqual([]);
  });
});
