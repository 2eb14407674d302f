import { describe, expect, it } from 'vitest';
import { defaultInstrument, parseInstrumentsFile, resolveInstrument } from '../../src/engine/index.js';
import { lots, pips, rejection, sig, simulation } from './simulation.js';

describe('the default instruments catalog', () => {
  it.each([
    ['EURUSD', 0.0001, 100_000, 'USD', 5],
    ['GBPCHF', 0.0001, 100_000, 'CHF', 5],
    ['USDJPY', 0.01, 100_000, 'JPY', 3],
    ['EURJPY', 0.01, 100_000, 'JPY', 3],
    ['XAUUSD', 0.1, 100, 'USD', 2],
    ['XAGUSD', 0.01, 5000, 'USD', 3],
    ['US30', 1, 1, 'USD', 2],
    ['GER40', 1, 1, 'EUR', 2],
    ['UK100', 1, 1, 'GBP', 2],
    ['BTCUSD', 1, 1, 'USD', 2],
    ['ETHEUR', 1, 1, 'EUR', 2],
  ])(
    '%s: pip %s, contract %s, quoted in %s, %s digits, lots 0.01/0.01/100',
    (symbol, pipSize, contractSize, quote, digits) => {
      expect(defaultInstrument(symbol)).toEqual({
        symbol,
        pipSize,
        contractSize,
        quoteCurrency: quote,
        digits,
        lotMin: 0.01,
        lotStep: 0.01,
        lotMax: 100,
      });
    },
  );

  it('does not know made-up symbols', () => {
    expect(defaultInstrument('FOOBAR')).toBeNull();
    expect(defaultInstrument('EURUSDX')).toBeNull();
  });

  it('overrides single fields and keeps the rest', () => {
    const spec = resolveInstrument('xauusd', { XAUUSD: { contractSize: 10, lotMax: 5 } });
    expect(spec).toMatchObject({ symbol: 'XAUUSD', contractSize: 10, lotMax: 5, pipSize: 0.1, lotMin: 0.01 });
  });

  it('defines a symbol the catalog lacks when pip size, contract size and quote currency are given', () => {
    expect(resolveInstrument('COPPER', { COPPER: { pipSize: 0.0001, contractSize: 25_000 } })).toBeNull();
    expect(
      resolveInstrument('COPPER', { COPPER: { pipSize: 0.0001, contractSize: 25_000, quoteCurrency: 'USD' } }),
    ).toEqual({
      symbol: 'COPPER',
      pipSize: 0.0001,
      digits: 5, // one decimal beyond the pip, like FX
      contractSize: 25_000,
      quoteCurrency: 'USD',
      lotMin: 0.01,
      lotStep: 0.01,
      lotMax: 100,
    });
  });
});

describe('instrument overrides in the engine', () => {
  it('an overridden contract size changes the profit', () => {
    // XAUUSD with contract 10: buy 1 lot at 2000.50, close at bid 2010.00 → (2010 − 2000.5) × 1 × 10 = 95.00
    const sim = simulation({ instruments: { XAUUSD: { contractSize: 10 } } });
    sim.tick('XAUUSD', 2000.0, 2000.5);
    sim.signal(sig('XAUUSD', 'buy', { volume: lots(1) }));
    sim.tick('XAUUSD', 2010.0, 2010.5);
    sim.signal(sig('XAUUSD', 'closeall'));
    expect(sim.of('closed')[0]).toMatchObject({ price: 2010, profit: 95 });
    expect(sim.state.balance).toBe(10_095);
  });

  it('overridden lot limits apply: a volume below the new minimum is rejected', () => {
    const sim = simulation({ instruments: { EURUSD: { lotMin: 0.1, lotStep: 0.1 } } });
    sim.tick('EURUSD', 1.1, 1.1002);
    // 0.19 floors to 0.1 on a 0.1 step
    expect(sim.signal(sig('EURUSD', 'buy', { volume: lots(0.19) })).events[0]).toMatchObject({
      type: 'opened',
      volume: 0.1,
    });
    expect(rejection(sim.signal(sig('EURUSD', 'buy', { volume: lots(0.09) })).events)).toMatch(
      /below the minimum of 0.1 lots/,
    );
  });

  it('an unknown symbol is rejected with a reason naming it', () => {
    const sim = simulation();
    sim.tick('FOOBAR', 1, 1.1);
    expect(rejection(sim.signal(sig('FOOBAR', 'buy', { volume: lots(1) })).events)).toBe(
      'FOOBAR is not a known instrument; define it in the instruments file',
    );
  });
});

describe('symbol mapping', () => {
  it('trades a signal for EURUSD as EURUSD.m, priced by EURUSD.m ticks', () => {
    const sim = simulation({ symbolMap: { EURUSD: 'EURUSD.m' } });
    sim.tick('EURUSD.m', 1.1, 1.1002);
    const opened = sim.signal(sig('EURUSD', 'buy', { volume: lots(0.1), sl: pips(20) })).events;
    expect(opened).toEqual([
      expect.objectContaining({ type: 'opened', symbol: 'EURUSD.m', price: 1.1002, sl: 1.0982 }),
    ]);
    // the stop watches the mapped symbol's bid: 1.0982 touched → closed, (1.0982 − 1.1002) × 0.1 × 100000 = −20.00
    expect(sim.tick('EURUSD.m', 1.0982, 1.0984)).toEqual([
      expect.objectContaining({ type: 'closed', reason: 'sl', profit: -20 }),
    ]);
  });

  it('matches case-insensitively and accepts the broker name in a signal', () => {
    const sim = simulation({ symbolMap: { eurusd: 'EURUSD.m' } });
    sim.tick('eurusd.M', 1.1, 1.1002);
    expect(sim.signal(sig('EURUSD.M', 'sell', { volume: lots(0.1) })).events[0]).toMatchObject({
      type: 'opened',
      symbol: 'EURUSD.m',
      price: 1.1,
    });
  });

  it('files a tick under the canonical name as the mapped symbol; other symbols do not price it', () => {
    const sim = simulation({ symbolMap: { EURUSD: 'EURUSD.m' } });
    // "EURUSD" is the canonical name, so this tick is filed under EURUSD.m as well
    sim.tick('EURUSD', 1.1, 1.1002);
    expect(sim.signal(sig('EURUSD', 'buy', { volume: lots(0.1) })).events[0]).toMatchObject({ symbol: 'EURUSD.m' });
    const other = simulation({ symbolMap: { EURUSD: 'EURUSD.m' } });
    other.tick('GBPUSD', 1.3, 1.3002);
    expect(rejection(other.signal(sig('EURUSD', 'buy', { volume: lots(0.1) })).events)).toBe(
      'there is no price for EURUSD.m yet',
    );
  });

  it('converts currencies through the mapped pair names', () => {
    // USDJPY quoted as USDJPY.m; a JPY profit on a USD account converts through it
    const sim = simulation({ symbolMap: { USDJPY: 'USDJPY.m', EURJPY: 'EURJPY.m' } });
    sim.tick('USDJPY.m', 150.0, 150.0);
    sim.tick('EURJPY.m', 160.0, 160.0);
    sim.signal(sig('EURJPY', 'buy', { volume: lots(1) }));
    sim.tick('EURJPY.m', 160.3, 160.3);
    sim.signal(sig('EURJPY', 'closeall'));
    // 0.30 JPY × 100000 = 30000 JPY; / 150 = 200.00 USD
    expect(sim.of('closed')[0]).toMatchObject({ profit: 200 });
  });
});

describe("symbol mapping of tickers the catalog does not know, and of TradingView's forms", () => {
  it('trades a ticker mapped to a catalog symbol as that instrument (GOLD → XAUUSD)', () => {
    const sim = simulation({ symbolMap: { GOLD: 'XAUUSD' } });
    sim.tick('XAUUSD', 2350, 2350.3);
    // XAUUSD's pip is 0.1: 20 pips below 2350.3
    expect(sim.signal(sig('GOLD', 'buy', { volume: lots(0.1), sl: pips(20) })).events[0]).toMatchObject({
      type: 'opened',
      symbol: 'XAUUSD',
      sl: 2348.3,
    });
    const unmapped = simulation();
    unmapped.tick('XAUUSD', 2350, 2350.3);
    expect(rejection(unmapped.signal(sig('GOLD', 'buy', { volume: lots(0.1) })).events)).toBe(
      'GOLD is not a known instrument; define it in the instruments file',
    );
  });

  it('lets two tickers map to one venue symbol, trading the same positions', () => {
    const sim = simulation({ symbolMap: { SPX500: 'US500.cash', US500: 'US500.cash' } });
    sim.tick('US500.cash', 5200, 5200.5);
    expect(sim.signal(sig('SPX500', 'buy', { volume: lots(1) })).events[0]).toMatchObject({
      type: 'opened',
      symbol: 'US500.cash',
    });
    expect(sim.signal(sig('US500', 'closebuy')).events[0]).toMatchObject({ type: 'closed', position: 1 });
  });

  it('drops an exchange prefix (OANDA:EURUSD, BINANCE:BTCUSD) unless the prefixed form is mapped itself', () => {
    const sim = simulation({ symbolMap: { 'COINBASE:BTCUSD': 'BTCUSD.spot' } });
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.tick('BTCUSD', 65000, 65015);
    sim.tick('BTCUSD.spot', 64990, 65005);
    expect(sim.signal(sig('OANDA:EURUSD', 'buy', { volume: lots(0.1) })).events[0]).toMatchObject({
      type: 'opened',
      symbol: 'EURUSD',
      price: 1.1002,
    });
    expect(sim.signal(sig('BINANCE:BTCUSD', 'buy', { volume: lots(1) })).events[0]).toMatchObject({
      type: 'opened',
      symbol: 'BTCUSD',
      price: 65015,
    });
    expect(sim.signal(sig('COINBASE:BTCUSD', 'buy', { volume: lots(1) })).events[0]).toMatchObject({
      type: 'opened',
      symbol: 'BTCUSD.spot',
      price: 65005,
    });
  });

  it('trades a perpetual (BTCUSD.P) or continuous future (ES1!) only through a mapping, and says how to add one', () => {
    const sim = simulation();
    sim.tick('BTCUSD', 65000, 65015);
    sim.tick('US500', 5200, 5200.5);
    expect(rejection(sim.signal(sig('BTCUSD.P', 'buy', { volume: lots(1) })).events)).toBe(
      'BTCUSD.P is a TradingView perpetual-futures symbol, not the spot BTCUSD; to trade it, add it to the symbolMap of the instruments file (like "BTCUSD.P": "BTCUSD") naming the venue\'s symbol for it',
    );
    expect(rejection(sim.signal(sig('BINANCE:BTCUSD.P', 'buy', { volume: lots(1) })).events)).toMatch(
      /^BINANCE:BTCUSD\.P \(read as BTCUSD\.P\): BTCUSD\.P is a TradingView perpetual-futures symbol/,
    );
    expect(rejection(sim.signal(sig('ES1!', 'buy', { volume: lots(1) })).events)).toBe(
      'ES1! is a TradingView continuous-futures symbol, which rolls from contract to contract; to trade it, add it to the symbolMap of the instruments file (like "ES1!": "US500") naming the venue\'s symbol for it',
    );
    const mapped = simulation({ symbolMap: { 'ES1!': 'US500', 'BTCUSD.P': 'BTCUSD' } });
    mapped.tick('US500', 5200, 5200.5);
    mapped.tick('BTCUSD', 65000, 65015);
    expect(mapped.signal(sig('ES1!', 'buy', { volume: lots(1) })).events[0]).toMatchObject({
      type: 'opened',
      symbol: 'US500',
      price: 5200.5,
    });
    expect(mapped.signal(sig('BYBIT:BTCUSD.P', 'sell', { volume: lots(1) })).events[0]).toMatchObject({
      type: 'opened',
      symbol: 'BTCUSD',
      price: 65000,
    });
  });
});

describe('the instruments file', () => {
  it('reads overrides and the symbol map, upper-casing canonical symbols', () => {
    const outcome = parseInstrumentsFile(
      JSON.stringify({
        symbolMap: { eurusd: 'EURUSD.m' },
        instruments: { xauusd: { lotMax: 20, quoteCurrency: 'usd' } },
      }),
    );
    expect(outcome).toEqual({
      ok: true,
      file: { symbolMap: { EURUSD: 'EURUSD.m' }, instruments: { XAUUSD: { lotMax: 20, quoteCurrency: 'USD' } } },
    });
  });

  it('names the line of a syntax error', () => {
    const text = '{\n  "instruments": {\n    "XAUUSD": { "lotMax": 20, }\n  }\n}\n';
    expect(parseInstrumentsFile(text)).toEqual({
      ok: false,
      line: 3,
      message: 'expected a quoted property name, found "}"',
    });
  });

  it('names the line of a bad field', () => {
    const text = '{\n  "instruments": {\n    "XAUUSD": {\n      "contractSize": -5\n    }\n  }\n}\n';
    expect(parseInstrumentsFile(text)).toEqual({
      ok: false,
      line: 4,
      message: 'instrument XAUUSD: contractSize must be a number above 0',
    });
  });

  it('rejects unknown fields, incomplete new symbols, crossed lot limits and clashing mappings', () => {
    expect(parseInstrumentsFile('{"instruments":{"EURUSD":{"pipsize":0.0001}}}')).toMatchObject({
      ok: false,
      message: expect.stringContaining('unknown field "pipsize"'),
    });
    expect(parseInstrumentsFile('{"instruments":{"COPPER":{"pipSize":0.0001}}}')).toMatchObject({
      ok: false,
      message: 'instrument COPPER is not in the built-in catalog, so it needs contractSize, quoteCurrency',
    });
    expect(parseInstrumentsFile('{"instruments":{"EURUSD":{"lotMin":5,"lotMax":1}}}')).toMatchObject({
      ok: false,
      message: 'instrument EURUSD: lotMin (5) is above lotMax (1)',
    });
    expect(parseInstrumentsFile('{"symbolMap":{"EURUSD":"X","USDJPY":"x"}}')).toMatchObject({
      ok: false,
      message:
        'symbolMap: EURUSD and USDJPY both name X but are different instruments; map only one of them to X, or give both the same fields in "instruments"',
    });
    expect(parseInstrumentsFile('{"symbolMap":{"GOLD":"XAUUSD","XAUUSD":"XAUUSD.m"}}')).toMatchObject({
      ok: false,
      message: 'symbolMap: GOLD maps to XAUUSD, which itself maps to XAUUSD.m: map GOLD to XAUUSD.m directly',
    });
    expect(parseInstrumentsFile('{"instrument":{}}')).toMatchObject({
      ok: false,
      line: 1,
      message: expect.stringContaining('unknown key'),
    });
    expect(parseInstrumentsFile('{"instruments":{},\n"instruments":{}}')).toMatchObject({ ok: false, line: 2 });
  });
});
