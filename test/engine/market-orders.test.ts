import { describe, expect, it } from 'vitest';
import { lots, percent, pips, price, rejection, sig, simulation, tp } from './simulation.js';

describe('market fills', () => {
  it('a buy fills at the ask and closes at the bid', () => {
    // buy 1 lot at ask 1.10020; close at bid 1.10150 → 0.0013 × 100000 = 130.00
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    expect(sim.signal(sig('EURUSD', 'buy', { volume: lots(1), comment: 'Alpha' })).events).toEqual([
      {
        type: 'opened',
        time: 2,
        position: 1,
        symbol: 'EURUSD',
        side: 'buy',
        volume: 1,
        price: 1.1002,
        sl: null,
        tp: null,
        comment: 'Alpha',
      },
    ]);
    sim.tick('EURUSD', 1.1015, 1.1017);
    expect(sim.signal(sig('EURUSD', 'closebuy')).events).toEqual([
      { type: 'closed', time: 4, position: 1, volume: 1, price: 1.1015, profit: 130, reason: 'signal' },
    ]);
    expect(sim.state.balance).toBe(10_130);
  });

  it('a sell fills at the bid and closes at the ask', () => {
    // sell 0.5 at bid 1.10000; close at ask 1.10120 → −0.0012 × 0.5 × 100000 = −60.00
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    expect(sim.signal(sig('EURUSD', 'sell', { volume: lots(0.5) })).events[0]).toMatchObject({
      price: 1.1,
      side: 'sell',
    });
    sim.tick('EURUSD', 1.101, 1.1012);
    sim.signal(sig('EURUSD', 'closesell'));
    expect(sim.of('closed')[0]).toMatchObject({ price: 1.1012, profit: -60 });
    expect(sim.state.balance).toBe(9940);
  });

  it('rejects a signal for a symbol with no price yet, and the run goes on', () => {
    const sim = simulation();
    expect(rejection(sim.signal(sig('EURUSD', 'buy', { volume: lots(1) })).events)).toBe(
      'there is no price for EURUSD yet',
    );
    sim.tick('EURUSD', 1.1, 1.1002);
    expect(sim.signal(sig('EURUSD', 'buy', { volume: lots(1) })).events[0]).toMatchObject({
      type: 'opened',
      position: 1,
    });
  });

  it('profit on a JPY pair is converted at the rate of the close', () => {
    // buy USDJPY 1 lot at 150.02, close at bid 150.52: 0.50 × 100000 = 50000 JPY; / mid(150.53) = 332.16 USD
    const sim = simulation();
    sim.tick('USDJPY', 150.0, 150.02);
    sim.signal(sig('USDJPY', 'buy', { volume: lots(1) }));
    sim.tick('USDJPY', 150.52, 150.54);
    sim.signal(sig('USDJPY', 'closeall'));
    expect(sim.of('closed')[0]).toMatchObject({ price: 150.52, profit: 332.16 });
  });

  it('profit on a EUR account is converted to EUR', () => {
    // EUR account; buy EURUSD 1 lot at 1.10020, close at bid 1.11020: 1000 USD; / mid(1.1103) = 900.66 EUR
    const sim = simulation({ currency: 'EUR' });
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'buy', { volume: lots(1) }));
    sim.tick('EURUSD', 1.1102, 1.1104);
    sim.signal(sig('EURUSD', 'closeall'));
    expect(sim.of('closed')[0]).toMatchObject({ profit: 900.66 });
    expect(sim.summary()).toMatchObject({ balance: 10_900.66, currency: 'EUR' });
  });
});

describe('stop loss and take profit from the fill price', () => {
  it('in pips', () => {
    // buy at 1.10020: SL 20 pips → 1.09820, TP 40 pips → 1.10420
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    expect(
      sim.signal(sig('EURUSD', 'buy', { volume: lots(1), sl: pips(20), tp: tp(pips(40)) })).events[0],
    ).toMatchObject({
      sl: 1.0982,
      tp: 1.1042,
    });
    // sell at 1.10000: SL 1.10200, TP 1.09600
    expect(
      sim.signal(sig('EURUSD', 'sell', { volume: lots(1), sl: pips(20), tp: tp(pips(40)) })).events[0],
    ).toMatchObject({
      sl: 1.102,
      tp: 1.096,
    });
  });

  it('as prices', () => {
    const sim = simulation();
    sim.tick('XAUUSD', 2000, 2000.5);
    expect(
      sim.signal(sig('XAUUSD', 'sell', { volume: lots(1), sl: price(2010), tp: tp(price(1980.25)) })).events[0],
    ).toMatchObject({
      price: 2000,
      sl: 2010,
      tp: 1980.25,
    });
  });

  it('in percent, rounded to the instrument digits', () => {
    // buy XAUUSD at 2000.50: SL 1% below = 1980.495 → 1980.50 (2 digits); TP 2% above = 2040.51
    const sim = simulation();
    sim.tick('XAUUSD', 2000, 2000.5);
    expect(
      sim.signal(sig('XAUUSD', 'buy', { volume: lots(1), sl: percent(1), tp: tp(percent(2)) })).events[0],
    ).toMatchObject({
      sl: 1980.5,
      tp: 2040.51,
    });
  });

  it("a JPY pair's pips are 0.01", () => {
    // sell USDJPY at 150.00: SL 25 pips → 150.25, TP 50 pips → 149.50
    const sim = simulation();
    sim.tick('USDJPY', 150.0, 150.02);
    expect(
      sim.signal(sig('USDJPY', 'sell', { volume: lots(1), sl: pips(25), tp: tp(pips(50)) })).events[0],
    ).toMatchObject({
      sl: 150.25,
      tp: 149.5,
    });
  });
});

describe('invalid stops reject the order', () => {
  it("a buy's stop at or above the bid", () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    expect(rejection(sim.signal(sig('EURUSD', 'buy', { volume: lots(1), sl: price(1.1005) })).events)).toBe(
      'the stop loss 1.10050 of a buy must be below the current bid 1.10000',
    );
    // equal counts as touched: a stop at the bid would close at once
    expect(rejection(sim.signal(sig('EURUSD', 'buy', { volume: lots(1), sl: price(1.1) })).events)).toMatch(
      /must be below/,
    );
    expect(sim.state.positions).toEqual([]);
  });

  it("a sell's stop at or below the ask, and a sell's target above the ask", () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    expect(rejection(sim.signal(sig('EURUSD', 'sell', { volume: lots(1), sl: price(1.1002) })).events)).toBe(
      'the stop loss 1.10020 of a sell must be above the current ask 1.10020',
    );
    expect(rejection(sim.signal(sig('EURUSD', 'sell', { volume: lots(1), tp: tp(price(1.105)) })).events)).toBe(
      'the take profit 1.10500 of a sell must be below the current ask 1.10020',
    );
  });

  it('a stop that would fall to zero or below', () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    expect(rejection(sim.signal(sig('EURUSD', 'buy', { volume: lots(1), sl: percent(100) })).events)).toBe(
      'the stop loss would be at 0.00000, which is not a positive price',
    );
  });

  it('take-profit levels out of order', () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    const levels = [
      { type: 'pips' as const, value: 40, pct: 50 },
      { type: 'pips' as const, value: 20, pct: 50 },
    ];
    expect(rejection(sim.signal(sig('EURUSD', 'buy', { volume: lots(1), tp: levels })).events)).toBe(
      'take-profit level 2 (1.10220) is nearer the entry than level 1 (1.10420); levels must be in order',
    );
  });
});
