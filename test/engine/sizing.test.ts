import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applySignal, applyTick, createEngineState } from '../../src/engine/index.js';
import { lots, pips, rejection, sig, simulation } from './simulation.js';

const volume = (type: 'lots' | 'pctbal' | 'pcteq' | 'dollar' | 'pctbal_loss' | 'pcteq_loss', value: number) => ({
  type,
  value,
});

describe('sizing in lots', () => {
  it('uses the lots as given (vol and vol_lots normalize to this)', () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    expect(sim.signal(sig('EURUSD', 'buy', { volume: lots(0.37) })).events[0]).toMatchObject({ volume: 0.37 });
  });

  it('floors a given size to the step', () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    expect(sim.signal(sig('EURUSD', 'buy', { volume: lots(0.259) })).events[0]).toMatchObject({ volume: 0.25 });
  });

  it('rejects a given size above the maximum', () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    expect(rejection(sim.signal(sig('EURUSD', 'buy', { volume: lots(150) })).events)).toBe(
      'the volume 150 lots is above the maximum of 100 lots for EURUSD',
    );
  });
});

describe('sizing without a volume', () => {
  it('uses the minimum lot by default', () => {
    const sim = simulation({ instruments: { XAUUSD: { lotMin: 0.1 } } });
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.tick('XAUUSD', 2000, 2000.5);
    expect(sim.signal(sig('EURUSD', 'buy')).events[0]).toMatchObject({ volume: 0.01 });
    expect(sim.signal(sig('XAUUSD', 'buy')).events[0]).toMatchObject({ volume: 0.1 });
  });

  it('uses the configured default size', () => {
    const sim = simulation({ defaultVolumeLots: 0.25 });
    sim.tick('EURUSD', 1.1, 1.1002);
    expect(sim.signal(sig('EURUSD', 'sell')).events[0]).toMatchObject({ volume: 0.25 });
  });
});

describe('sizing by percent of balance or equity (notional value)', () => {
  it('pctbal: buy EURUSD at the ask', () => {
    // 100% of 10000 USD = 10000 USD notional; one lot at ask 1.10020 is 110020 USD → 0.0909 → 0.09
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    expect(sim.signal(sig('EURUSD', 'buy', { volume: volume('pctbal', 100) })).events[0]).toMatchObject({
      volume: 0.09,
    });
  });

  it('pctbal: a JPY pair converts the notional through USDJPY', () => {
    // sell USDJPY at bid 149.98; one lot = 100000 × 149.98 JPY; JPY→USD = 1 / mid(149.99)
    // → 99993.33 USD per lot; 50% of 10000 = 5000 → 0.050003 → 0.05
    const sim = simulation();
    sim.tick('USDJPY', 149.98, 150.0);
    expect(sim.signal(sig('USDJPY', 'sell', { volume: volume('pctbal', 50) })).events[0]).toMatchObject({
      volume: 0.05,
      price: 149.98,
    });
  });

  it('pcteq: uses equity, which includes the floating loss', () => {
    // GBPUSD buy 1 lot at 1.25020, bid falls to 1.24520 → floating −500 → equity 9500
    // sell EURUSD at bid 1.25000: 9500 / (100000 × 1.25) = 0.076 → 0.07
    // (pctbal would give 10000 / 125000 = 0.08)
    const sim = simulation();
    sim.tick('GBPUSD', 1.25, 1.2502);
    sim.signal(sig('GBPUSD', 'buy', { volume: lots(1) }));
    sim.tick('GBPUSD', 1.2452, 1.2454);
    sim.tick('EURUSD', 1.25, 1.2502);
    expect(sim.summary().equity).toBe(9500);
    expect(sim.signal(sig('EURUSD', 'sell', { volume: volume('pcteq', 100) })).events[0]).toMatchObject({
      volume: 0.07,
    });
    expect(sim.signal(sig('EURUSD', 'sell', { volume: volume('pctbal', 100) })).events[0]).toMatchObject({
      volume: 0.08,
    });
  });

  it('rejects a size below the minimum lot, never rounding up', () => {
    // 1% of 10000 = 100 USD notional; 100 / 110020 = 0.0009 lots
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    expect(rejection(sim.signal(sig('EURUSD', 'buy', { volume: volume('pctbal', 1) })).events)).toBe(
      'the volume 0.00090893 lots is below the minimum of 0.01 lots for EURUSD; it is not rounded up',
    );
    expect(sim.state.positions).toEqual([]);
  });
});

describe('sizing by risk (loss at the stop)', () => {
  it('dollar: EURUSD buy with a 20-pip stop', () => {
    // fill at ask 1.10020, stop 1.09820: loss per lot 0.0020 × 100000 = 200 USD; 50 / 200 = 0.25
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    expect(sim.signal(sig('EURUSD', 'buy', { volume: volume('dollar', 50), sl: pips(20) })).events[0]).toMatchObject({
      volume: 0.25,
      sl: 1.0982,
    });
  });

  it('pctbal_loss: XAUUSD with a 50-pip stop', () => {
    // 1% of 10000 = 100 USD; fill at ask 2000.50, stop 50 × 0.1 = 5.0 lower = 1995.50
    // loss per lot 5.0 × 100 = 500 USD → 100 / 500 = 0.2
    const sim = simulation();
    sim.tick('XAUUSD', 2000.0, 2000.5);
    expect(
      sim.signal(sig('XAUUSD', 'buy', { volume: volume('pctbal_loss', 1), sl: pips(50) })).events[0],
    ).toMatchObject({
      volume: 0.2,
      price: 2000.5,
      sl: 1995.5,
    });
  });

  it('pctbal_loss: a JPY pair converts the loss through its own rate', () => {
    // sell USDJPY at bid 150.00, stop 30 pips × 0.01 = 150.30; loss per lot 0.30 × 100000 = 30000 JPY
    // JPY→USD = 1 / mid(150.01) → 199.9867 USD per lot; 1% of 10000 = 100 → 0.50003 → 0.5
    const sim = simulation();
    sim.tick('USDJPY', 150.0, 150.02);
    expect(
      sim.signal(sig('USDJPY', 'sell', { volume: volume('pctbal_loss', 1), sl: pips(30) })).events[0],
    ).toMatchObject({
      volume: 0.5,
      sl: 150.3,
    });
  });

  it('pcteq_loss: uses equity', () => {
    // equity 9500 (GBPUSD floating −500); 2% = 190 USD; EURUSD sell at bid 1.10000, stop 1.10200:
    // 200 USD per lot → 0.95
    const sim = simulation();
    sim.tick('GBPUSD', 1.25, 1.2502);
    sim.signal(sig('GBPUSD', 'buy', { volume: lots(1) }));
    sim.tick('GBPUSD', 1.2452, 1.2454);
    sim.tick('EURUSD', 1.1, 1.1002);
    expect(
      sim.signal(sig('EURUSD', 'sell', { volume: volume('pcteq_loss', 2), sl: pips(20) })).events[0],
    ).toMatchObject({
      volume: 0.95,
    });
  });

  it('rejects when the risk sizes above the maximum', () => {
    // 100000 USD risk on a 3-pip stop (1.10020 → 1.09990): 100000 / 30 = 3333.33 lots
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    expect(rejection(sim.signal(sig('EURUSD', 'buy', { volume: volume('dollar', 100_000), sl: pips(3) })).events)).toBe(
      'the volume 3333.33333333 lots is above the maximum of 100 lots for EURUSD',
    );
  });

  it('never turns a whole number of steps into one step less (property)', () => {
    // a k-dollar risk on a 10-pip EURUSD stop is exactly k / 100 lots (10 pips × 100000 = 100 USD per lot)
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), fc.boolean(), (k, buy) => {
        const state = applyTick(createEngineState({ balance: 1e6 }), {
          time: 0,
          symbol: 'EURUSD',
          bid: 1.0713,
          ask: 1.0715,
        }).state;
        const { events } = applySignal(
          state,
          sig('EURUSD', buy ? 'buy' : 'sell', { volume: volume('dollar', k), sl: pips(10) }),
          1,
        );
        return events[0]?.type === 'opened' && events[0].volume === Number((k / 100).toFixed(2));
      }),
      { numRuns: 300 },
    );
  });
});

describe('sizing on a non-USD account', () => {
  it('converts a USD-quoted risk to EUR through EURUSD', () => {
    // EUR account 10000; 1% = 100 EUR. GBPUSD buy at ask 1.25020, stop 20 pips → 200 USD per lot.
    // USD→EUR = 1 / mid(EURUSD 1.24990/1.25010 = 1.25) = 0.8 → 160 EUR per lot → 0.625 → 0.62
    const sim = simulation({ currency: 'EUR' });
    sim.tick('EURUSD', 1.2499, 1.2501);
    sim.tick('GBPUSD', 1.25, 1.2502);
    expect(
      sim.signal(sig('GBPUSD', 'buy', { volume: volume('pctbal_loss', 1), sl: pips(20) })).events[0],
    ).toMatchObject({
      volume: 0.62,
    });
  });

  it('converts a JPY-quoted notional to EUR through USD when no EURJPY or JPYEUR is quoted', () => {
    // EUR account; buy USDJPY at ask 100.00 (bid 100.00): one lot = 10,000,000 JPY
    // JPY→USD = 1/100, USD→EUR = 1/mid(EURUSD) = 1/1.25 → 80000 EUR per lot; 100% of 10000 = 0.125 → 0.12
    const sim = simulation({ currency: 'EUR' });
    sim.tick('EURUSD', 1.25, 1.25);
    sim.tick('USDJPY', 100, 100);
    expect(sim.signal(sig('USDJPY', 'buy', { volume: volume('pctbal', 100) })).events[0]).toMatchObject({
      volume: 0.12,
    });
  });

  it('rejects when the feed has no rate to the account currency', () => {
    const sim = simulation({ currency: 'EUR' });
    sim.tick('GBPUSD', 1.25, 1.2502);
    expect(rejection(sim.signal(sig('GBPUSD', 'buy', { volume: lots(0.1) })).events)).toBe(
      'no price for USDEUR or EURUSD in the feed yet to convert USD to the account currency EUR',
    );
  });
});
