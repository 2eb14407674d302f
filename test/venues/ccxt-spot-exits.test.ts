import { ccxt } from '../../src/agent/venues/ccxt/ccxt-library.js';
import { describe, expect, it } from 'vitest';
import { emptyLinks } from '../../src/agent/venue-book.js';
import { executeSignal } from '../../src/agent/venue-execution.js';
import { createSymbolMap, type EngineState } from '../../src/engine/index.js';
import { parseSignal } from '../../src/language/index.js';
import { fixture, recordedVenue } from './support/ccxt-records.js';

/**
 * On a spot market each open sell order locks the coins it sells (Binance refuses a second one
 * for the same coins), so a stop loss and a take-profit cannot both be held: a signal asking for
 * both is refused before any order is sent, rather than opening a position left without one of
 * them. Either alone goes through.
 */
const markets = fixture('binance-markets.json');

function bookOn(venue: ReturnType<typeof recordedVenue>['venue'], symbol: string) {
  const { symbol: _name, ...spec } = venue.instrument(symbol)!;
  const state: EngineState = {
    config: {
      currency: 'USDT',
      instruments: { LTCUSDT: spec },
      symbolMap: createSymbolMap({ LTCUSDT: symbol }),
      defaultVolumeLots: null,
    },
    balance: 10_000,
    quotes: { [symbol]: { bid: 50, ask: 50.01 } },
    positions: [],
    orders: [],
    nextTicket: 1,
  };
  return emptyLinks(state);
}

async function execute(market: 'spot' | 'swap', text: string) {
  // Every order request is captured and answered as unreachable: the test looks at what was asked.
  const { venue, sent } = recordedVenue(
    { exchange: 'binance', market, markets, exchangeOptions: { leverageBrackets: {} } },
    () => {
      throw new ccxt.NetworkError('captured');
    },
  );
  await venue.open().catch(() => undefined);
  sent.splice(0);
  const parsed = parseSignal(text, 'text');
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const book = bookOn(venue, market === 'spot' ? 'LTC/USDT' : 'LTC/USDT:USDT');
  const run = executeSignal(venue, book, { id: 'sig-1', signal: parsed.signal, text }, Date.now());
  return { run, sent };
}

describe('CCXT venue on a spot market: one closing order per holding', () => {
  it('a buy with both a stop loss and a take-profit is refused at signal time, nothing sent, saying what to send', async () => {
    const { run, sent } = await execute('spot', 'LTCUSDT,buy,vol=1,sl_price=45,tp_price=60');
    const { outcome } = await run;
    expect(outcome.status).toBe('rejected');
    expect(outcome.message).toBe(
      'ccxt:binance trades a spot market here, where each open sell order locks the coins it sells: a stop loss and a take-profit on the same LTC/USDT cannot both be held by the exchange, and the position would be left without one of them. Send the stop loss or the take-profit levels, not both, or trade the perpetual (--market swap), where both are reduce-only orders',
    );
    expect(sent.filter((r) => r.method === 'POST')).toEqual([]);
  });

  it('a pending spot entry with both is refused the same way', async () => {
    const { run, sent } = await execute('spot', 'LTCUSDT,buylimit,vol=1,entry_price=48,sl_price=45,tp_price=60');
    expect((await run).outcome.message).toContain('cannot both be held by the exchange');
    expect(sent.filter((r) => r.method === 'POST')).toEqual([]);
  });

  it('a spot buy with a stop loss only goes to the exchange', async () => {
    const { run, sent } = await execute('spot', 'LTCUSDT,buy,vol=1,sl_price=45');
    // The captured market order is answered as unreachable, which the agent retries.
    await expect(run).rejects.toThrow(/did not answer/);
    expect(sent.filter((r) => r.method === 'POST').map((r) => new URL(r.url).pathname)).toEqual(['/api/v3/order']);
  });

  it('on a swap market both are placed (reduce-only orders do not lock coins)', async () => {
    const { run, sent } = await execute('swap', 'LTCUSDT,buy,vol=1,sl_price=45,tp_price=60');
    await expect(run).rejects.toThrow(/did not answer/);
    expect(sent.filter((r) => r.method === 'POST').map((r) => new URL(r.url).pathname)).toEqual(['/fapi/v1/order']);
  });
});
