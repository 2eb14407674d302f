import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { reconcile } from '../../src/agent/reconciliation.js';
import type { VenueHoldings, VenueOrder, VenuePosition } from '../../src/agent/venue.js';
import type { VenueBook } from '../../src/agent/venue-book.js';
import { createEngineState, type Position } from '../../src/engine/index.js';
import type { PendingOrder } from '../../src/engine/pending-orders.js';

/** The book's reconciliation with what the venue holds, the venue being the truth (src/agent/reconciliation.ts). */

const position = (ticket: number, side: 'buy' | 'sell', volume: number, symbol = 'EURUSD'): Position => ({
  ticket,
  symbol,
  side,
  volume,
  originalVolume: volume,
  price: 1.1,
  sl: side === 'buy' ? 1.09 : 1.11,
  tp: [{ price: side === 'buy' ? 1.12 : 1.08, pct: 100 }],
  tpNext: 0,
  comment: null,
  trail: null,
  breakeven: null,
  breakevenDone: false,
  openedAt: 0,
  signalId: `signal-${ticket}`,
});

const pending = (ticket: number, side: 'buy' | 'sell', volume: number, symbol = 'EURUSD'): PendingOrder => ({
  ticket,
  symbol,
  side,
  kind: 'limit',
  volume,
  price: 1.095,
  sl: side === 'buy' ? 1.09 : 1.11,
  tp: [],
  comment: null,
  trail: null,
  breakeven: null,
  placedAt: 0,
  signalId: `signal-${ticket}`,
});

const venueOrder = (
  id: string,
  clientId: string | null,
  side: 'buy' | 'sell',
  volume: number,
  kind: VenueOrder['kind'] = 'limit',
  filled = 0,
  symbol = 'EURUSD',
): VenueOrder => ({
  id,
  clientId,
  symbol,
  side,
  kind,
  volume,
  price: 1.1,
  status: 'open',
  filled,
  average: null,
  fills: [],
});

const venuePos = (side: 'buy' | 'sell', volume: number, id = `EURUSD:${side}`, symbol = 'EURUSD'): VenuePosition => ({
  id,
  symbol,
  side,
  volume,
  price: 1.1,
  protection: [],
});

/** A book holding `positions` (each protected by a stop `s<ticket>` and target `t<ticket>`) and `orders` (venue order `e<ticket>`). */
function bookOf(positions: Position[], orders: PendingOrder[] = []): VenueBook {
  const state = { ...createEngineState({ balance: 10_000 }), positions, orders, nextTicket: 100 };
  const protection: VenueBook['protection'] = {};
  for (const p of positions)
    protection[String(p.ticket)] = {
      revision: 0,
      orders: [
        { id: `s${p.ticket}`, symbol: p.symbol },
        { id: `t${p.ticket}`, symbol: p.symbol },
      ],
    };
  const refs: VenueBook['orders'] = {};
  for (const o of orders) refs[String(o.ticket)] = { id: `e${o.ticket}`, symbol: o.symbol };
  return { state, protection, orders: refs, positions: {} };
}

/** The venue's open orders for the book's positions and entries, as it would list them. */
function protectionAtVenue(book: VenueBook): VenueOrder[] {
  return book.state.positions.flatMap((p) => {
    const exit = p.side === 'buy' ? 'sell' : 'buy';
    const base = clientOrderId(p.signalId!, `p${p.ticket}r0`);
    return [
      venueOrder(`s${p.ticket}`, `${base}s`, exit, p.volume, 'stop_loss'),
      venueOrder(`t${p.ticket}`, `${base}t1`, exit, p.volume, 'take_profit'),
    ];
  });
}

describe('reconcile', () => {
  it('a position the venue no longer holds leaves the book, and its stop and target are to be cancelled, once', () => {
    const book = bookOf([position(1, 'buy', 0.1)]);
    const done = reconcile(book, { positions: [], orders: protectionAtVenue(book) });
    expect(done.book.state.positions).toEqual([]);
    expect(done.cancel.map((o) => o.id).sort()).toEqual(['s1', 't1']);
    expect(done.dropped.map((d) => d.position.ticket)).toEqual([1]);
    expect(done.book.protection['1']).toBeUndefined();
    expect(done.notManaged).toEqual([]);
    // Reconciled again with the same venue: nothing more to cancel, nothing found.
    const again = reconcile(done.book, { positions: [], orders: [] });
    expect(again.cancel).toEqual([]);
    expect(again.findings).toEqual([]);
  });

  it('a position smaller at the venue shrinks in the book and gets its stop and targets again', () => {
    const book = bookOf([position(1, 'buy', 0.1)]);
    const done = reconcile(book, { positions: [venuePos('buy', 0.04)], orders: protectionAtVenue(book) });
    expect(done.book.state.positions.map((p) => [p.ticket, p.volume])).toEqual([[1, 0.04]]);
    expect(done.reprotect).toEqual([1]);
    expect(done.cancel).toEqual([]);
  });

  it("two positions on one side, the venue holding the first one's lots: the newest leaves the book", () => {
    const book = bookOf([position(1, 'buy', 0.1), position(2, 'buy', 0.05)]);
    const done = reconcile(book, { positions: [venuePos('buy', 0.1)], orders: protectionAtVenue(book) });
    expect(done.book.state.positions.map((p) => p.ticket)).toEqual([1]);
    expect(done.cancel.map((o) => o.id).sort()).toEqual(['s2', 't2']);
  });

  it('a pending entry the venue filled while the agent did not look is adopted as a position and is to be protected', () => {
    const book = bookOf([], [pending(5, 'buy', 0.2)]);
    const done = reconcile(book, { positions: [venuePos('buy', 0.2)], orders: [] });
    expect(done.book.state.orders).toEqual([]);
    expect(done.book.orders).toEqual({});
    expect(done.book.state.positions).toHaveLength(1);
    const adopted = done.book.state.positions[0]!;
    expect(adopted).toMatchObject({ symbol: 'EURUSD', side: 'buy', volume: 0.2, sl: 1.09, signalId: 'signal-5' });
    expect(done.reprotect).toEqual([adopted.ticket]);
    expect(done.notManaged).toEqual([]);
  });

  it('a pending entry the venue no longer lists and holds no position of leaves the book, handed back as dropped (kept for a cancel in flight)', () => {
    const book = bookOf([], [pending(5, 'buy', 0.2)]);
    const done = reconcile(book, { positions: [], orders: [] }, { settling: true });
    expect(done.book.state.orders).toEqual([]);
    expect(done.book.orders).toEqual({});
    expect(done.droppedOrders).toEqual([{ order: book.state.orders[0], ref: { id: 'e5', symbol: 'EURUSD' } }]);
    expect(done.notManaged).toEqual([]);
    // An adopted entry is no dropped order.
    expect(reconcile(book, { positions: [venuePos('buy', 0.2)], orders: [] }).droppedOrders).toEqual([]);
  });

  it('a position only the venue holds is not managed; so is an entry order of ours the book lacks; a stop of ours for a gone position is cancelled', () => {
    const book = bookOf([]);
    const orphan = venueOrder('x1', `${clientOrderId('gone-signal', 'p7r0')}s`, 'sell', 0.1, 'stop_loss');
    const entry = venueOrder('x2', clientOrderId('in-flight', 'o'), 'sell', 0.3, 'limit', 0, 'GBPUSD');
    const done = reconcile(book, { positions: [venuePos('sell', 0.5, 'EURUSD:sell')], orders: [orphan, entry] });
    expect(done.notManaged.map((n) => [n.kind, n.id, n.volume])).toEqual([
      ['position', 'EURUSD:sell', 0.5],
      ['order', 'x2', 0.3],
    ]);
    expect(done.cancel.map((o) => o.id)).toEqual(['x1']);
    expect(done.findings.some((f) => f.level === 'error' && f.message.includes('x1'))).toBe(true);
  });

  it('a stop of ours whose position is gone from the book is kept while the venue holds an unmanaged position it may protect', () => {
    const orphan = venueOrder('x1', `${clientOrderId('gone-signal', 'p7r0')}s`, 'sell', 0.1, 'stop_loss');
    const done = reconcile(bookOf([]), { positions: [venuePos('buy', 0.1)], orders: [orphan] });
    expect(done.cancel).toEqual([]);
    expect(done.notManaged.map((n) => [n.kind, n.id])).toEqual([
      ['position', 'EURUSD:buy'],
      ['order', 'x1'],
    ]);
  });

  it('the same on a market whose symbol holds a colon (CCXT swaps: BTC/USDT:USDT): the stop is kept, the position named right', () => {
    const symbol = 'BTC/USDT:USDT';
    const orphan = venueOrder('x1', `${clientOrderId('gone-signal', 'p7r0')}s`, 'sell', 0.01, 'stop_loss', 0, symbol);
    const done = reconcile(bookOf([]), {
      positions: [venuePos('buy', 0.01, `${symbol}:buy`, symbol)],
      orders: [orphan],
    });
    expect(done.cancel).toEqual([]);
    expect(done.notManaged.map((n) => [n.kind, n.id, n.symbol, n.side])).toEqual([
      ['position', `${symbol}:buy`, symbol, 'buy'],
      ['order', 'x1', symbol, 'sell'],
    ]);
  });

  it("an earlier revision of a position's stop left standing by a move is cancelled", () => {
    const book = bookOf([position(1, 'buy', 0.1)]);
    book.protection['1'] = { revision: 2, orders: [{ id: 's1', symbol: 'EURUSD' }] };
    const old = venueOrder('old', `${clientOrderId('signal-1', 'p1r1')}s`, 'sell', 0.1, 'stop_loss');
    const done = reconcile(book, {
      positions: [venuePos('buy', 0.1)],
      orders: [venueOrder('s1', null, 'sell', 0.1, 'stop_loss'), old],
    });
    expect(done.cancel.map((o) => o.id)).toEqual(['old']);
    expect(done.notManaged).toEqual([]);
  });

  it('a pending entry filled in part and still open is reported', () => {
    const book = bookOf([], [pending(5, 'buy', 0.2)]);
    const done = reconcile(book, {
      positions: [],
      orders: [venueOrder('e5', clientOrderId('signal-5', 'o'), 'buy', 0.2, 'limit', 0.05)],
    });
    expect(done.partlyFilled).toEqual({ '5': 0.05 });
    expect(done.book.state.orders).toHaveLength(1);
    expect(done.findings.map((f) => f.level)).toContain('warn');
  });

  it('a position whose stop and target are gone from the venue, the position still held, is to be protected again', () => {
    const book = bookOf([position(1, 'buy', 0.1)]);
    const done = reconcile(book, { positions: [venuePos('buy', 0.1)], orders: [] });
    expect(done.reprotect).toEqual([1]);
    expect(done.book.state.positions).toHaveLength(1);
  });

  it('a conditional stop missing from the open orders is gone only once the look-up found it ended unfilled (some exchanges list conditional orders apart): then placed again, said at error', () => {
    const book = bookOf([position(1, 'buy', 0.1)]);
    book.protection['1'] = { revision: 0, orders: [{ id: 's1', symbol: 'EURUSD', trigger: true }] };
    const holdings = { positions: [venuePos('buy', 0.1)], orders: [] };
    expect(reconcile(book, holdings).reprotect).toEqual([]);
    expect(reconcile(book, holdings, { endedUnfilled: new Set(['other']) }).findings).toEqual([]);
    const done = reconcile(book, holdings, { endedUnfilled: new Set(['s1']) });
    expect(done.reprotect).toEqual([1]);
    expect(done.book.state.positions).toHaveLength(1);
    expect(done.findings).toEqual([
      {
        level: 'error',
        message:
          'none of the stop and target orders of position 1 is open at the venue any more, though the venue still holds the position: they are placed again; looked up by id, order s1 ended with nothing filled (cancelled, expired, or unknown to the venue)',
        fields: { position: 1, symbol: 'EURUSD', orders: ['s1'], endedUnfilled: ['s1'] },
      },
    ]);
  });

  it('a conditional stop found ended after filling part, that part taken already, is gone too (its stop for the rest refused): placed again, said at error', () => {
    const book = bookOf([position(1, 'buy', 0.06)]);
    book.protection['1'] = { revision: 0, orders: [{ id: 's1', symbol: 'EURUSD', trigger: true }] };
    const holdings = { positions: [venuePos('buy', 0.06)], orders: [] };
    expect(reconcile(book, holdings, { endedInPart: new Map([['other', 0.04]]) }).reprotect).toEqual([]);
    const done = reconcile(book, holdings, { endedInPart: new Map([['s1', 0.04]]) });
    expect(done.reprotect).toEqual([1]);
    expect(done.findings).toEqual([
      {
        level: 'error',
        message:
          'none of the stop and target orders of position 1 is open at the venue any more, though the venue still holds the position: they are placed again; looked up by id, order s1 ended (cancelled or expired) after filling 0.04 lots, taken as an exit',
        fields: { position: 1, symbol: 'EURUSD', orders: ['s1'], endedInPart: ['s1'] },
      },
    ]);
  });

  it('a swap stop found ended unfilled while its target still stands: the position has no stop, so its stop and targets are placed again, said at error naming the stop; merely missing from the open orders, it is not', () => {
    const both = bookOf([position(1, 'buy', 0.1)]);
    both.protection['1'] = {
      revision: 0,
      orders: [
        { id: 's1', symbol: 'EURUSD', trigger: true },
        { id: 't1', symbol: 'EURUSD' },
      ],
    };
    const holdings = {
      positions: [venuePos('buy', 0.1)],
      orders: [venueOrder('t1', null, 'sell', 0.1, 'take_profit')],
    };
    expect(reconcile(both, holdings).reprotect).toEqual([]);
    expect(reconcile(both, holdings, { endedUnfilled: new Set(['t9']) }).findings).toEqual([]);
    const done = reconcile(both, holdings, { endedUnfilled: new Set(['s1']) });
    expect(done.reprotect).toEqual([1]);
    expect(done.cancel).toEqual([]);
    expect(done.findings).toEqual([
      {
        level: 'error',
        message:
          'the stop order s1 of position 1 is not open at the venue any more, though the venue still holds the position and its target t1 still stands: the position has no stop at the venue; its stop and targets are placed again; looked up by id, order s1 ended with nothing filled (cancelled, expired, or unknown to the venue)',
        fields: {
          position: 1,
          symbol: 'EURUSD',
          orders: ['s1', 't1'],
          stopGone: ['s1'],
          standing: ['t1'],
          endedUnfilled: ['s1'],
        },
      },
    ]);
    // The stop standing and a target gone: not bare of its stop, left as it is.
    const stop = [venueOrder('s1', null, 'sell', 0.1, 'stop_loss')];
    expect(
      reconcile(both, { positions: [venuePos('buy', 0.1)], orders: stop }, { endedUnfilled: new Set(['t1']) }).findings,
    ).toEqual([]);
  });

  it("a venue that cannot list positions leaves the book's positions alone", () => {
    const book = bookOf([position(1, 'buy', 0.1)]);
    const done = reconcile(book, { positions: null, orders: [] });
    expect(done.book.state.positions).toHaveLength(1);
    expect(done.cancel).toEqual([]);
    expect(done.reprotect).toEqual([]);
  });

  it("positions named by the venue's ids: one gone of two on the same side leaves, the other stays", () => {
    const book = bookOf([position(1, 'buy', 0.1), position(2, 'buy', 0.1)]);
    book.positions = { '1': 'P1', '2': 'P2' };
    const done = reconcile(book, { positions: [venuePos('buy', 0.1, 'P2')], orders: protectionAtVenue(book) });
    expect(done.book.state.positions.map((p) => p.ticket)).toEqual([2]);
    expect(done.cancel.map((o) => o.id).sort()).toEqual(['s1', 't1']);
    expect(done.book.positions).toEqual({ '2': 'P2' });
  });

  it('nothing the venue holds is dropped in silence: each position lot and each open order is in the book, cancelled, or not managed', () => {
    const side = fc.constantFrom<'buy' | 'sell'>('buy', 'sell');
    const symbol = fc.constantFrom('EURUSD', 'GBPUSD');
    const lots = fc.integer({ min: 1, max: 50 }).map((n) => n / 100);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(side, lots, symbol), { maxLength: 4 }),
        fc.array(fc.tuple(side, lots, symbol), { maxLength: 3 }),
        fc.array(fc.tuple(side, lots, symbol), { maxLength: 4 }),
        fc.array(fc.tuple(side, lots, symbol, fc.constantFrom('o', 'p3r0s', 'p50r1t1', 'c1')), { maxLength: 3 }),
        fc.boolean(),
        (bookPositions, bookOrders, venuePositions, strangers, keepProtection) => {
          const positions = bookPositions.map(([s, v, sym], i) => position(i + 1, s, v, sym));
          const orders = bookOrders.map(([s, v, sym], i) => pending(i + 20, s, v, sym));
          const book = bookOf(positions, orders);
          // Netted by symbol and side, as a one-way venue would list them.
          const netted = new Map<string, number>();
          for (const [s, v, sym] of venuePositions) netted.set(`${sym}:${s}`, (netted.get(`${sym}:${s}`) ?? 0) + v);
          const held: VenuePosition[] = [...netted].map(([key, v]) =>
            venuePos(key.split(':')[1] as 'buy' | 'sell', Math.round(v * 100) / 100, key, key.split(':')[0]),
          );
          const open: VenueOrder[] = [
            ...(keepProtection ? protectionAtVenue(book) : []),
            ...orders
              .filter((_, i) => i % 2 === 0)
              .map((o) => venueOrder(`e${o.ticket}`, clientOrderId(o.signalId!, 'o'), o.side, o.volume)),
            ...strangers.map(([s, v, sym, step], i) =>
              venueOrder(`x${i}`, clientOrderId(`stranger-${i}`, step), s, v, 'limit', 0, sym),
            ),
          ];
          const holdings: VenueHoldings = { positions: held, orders: open };
          const done = reconcile(book, holdings);
          // Every venue position's lots: the book's on that symbol and side, plus what is not managed.
          for (const p of held) {
            const inBook = done.book.state.positions
              .filter((q) => q.symbol === p.symbol && q.side === p.side)
              .reduce((sum, q) => sum + q.volume, 0);
            const unmanaged = done.notManaged
              .filter((n) => n.kind === 'position' && n.symbol === p.symbol && n.side === p.side)
              .reduce((sum, n) => sum + n.volume, 0);
            expect(inBook + unmanaged).toBeCloseTo(p.volume, 8);
          }
          // The book holds nothing the venue does not.
          for (const q of done.book.state.positions) expect(netted.has(`${q.symbol}:${q.side}`)).toBe(true);
          // Every open order: known to the book, to be cancelled, or not managed.
          const known = new Set([
            ...Object.values(done.book.orders).map((o) => o.id),
            ...Object.values(done.book.protection).flatMap((h) => h.orders.map((o) => o.id)),
          ]);
          for (const o of open) {
            const accounted =
              known.has(o.id) ||
              done.cancel.some((c) => c.id === o.id) ||
              done.notManaged.some((n) => n.kind === 'order' && n.id === o.id);
            expect(accounted, `order ${o.id} (${o.clientId}) dropped in silence`).toBe(true);
          }
          // Nothing cancelled is still in the book.
          for (const c of done.cancel) expect(known.has(c.id)).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });
});

/** A spot account's coins (free and locked) and its markets' base coins. */
const spot = (held: Record<string, number>): VenueHoldings['coins'] => ({
  held,
  baseOf: { 'BTC/USDT': 'BTC', 'BTC/USDC': 'BTC', 'ETH/USDT': 'ETH' },
});

describe('reconcile on a spot market: the book covered by the coins held', () => {
  it('a buy position whose coins were sold outside the agent leaves the book, its stop and target to be cancelled, once', () => {
    const book = bookOf([position(1, 'buy', 0.1, 'BTC/USDT')]);
    const orders = protectionAtVenue(book);
    const done = reconcile(book, { positions: null, orders, coins: spot({ BTC: 0, USDT: 5000 }) });
    expect(done.book.state.positions).toEqual([]);
    expect(done.cancel.map((o) => o.id).sort()).toEqual(['s1', 't1']);
    expect(done.dropped.map((d) => d.position.ticket)).toEqual([1]);
    expect(done.findings).toEqual([
      expect.objectContaining({
        level: 'warn',
        message: expect.stringContaining('the account no longer holds the BTC of this position (0 held'),
      }),
    ]);
    expect(done.notManaged).toEqual([]);
    const again = reconcile(done.book, { positions: null, orders: [], coins: spot({ BTC: 0 }) });
    expect(again.cancel).toEqual([]);
    expect(again.findings).toEqual([]);
  });

  it('fewer coins than the book holds: the newest position shrinks to what is left and is protected again', () => {
    const book = bookOf([position(1, 'buy', 0.1, 'BTC/USDT'), position(2, 'buy', 0.05, 'BTC/USDT')]);
    const done = reconcile(book, { positions: null, orders: protectionAtVenue(book), coins: spot({ BTC: 0.12 }) });
    expect(done.book.state.positions.map((p) => [p.ticket, p.volume])).toEqual([
      [1, 0.1],
      [2, 0.02],
    ]);
    expect(done.reprotect).toEqual([2]);
    expect(done.cancel).toEqual([]);
    expect(done.findings[0]!.message).toContain('the account holds 0.12 BTC');
  });

  it('the coins left are those a standing stop locks: the position whose stop is gone from the venue goes first, though older', () => {
    const book = bookOf([position(1, 'buy', 0.1, 'BTC/USDT'), position(2, 'buy', 0.1, 'BTC/USDT')]);
    const standing = protectionAtVenue(book).filter((o) => o.id.endsWith('2'));
    const done = reconcile(book, { positions: null, orders: standing, coins: spot({ BTC: 0.1 }) });
    expect(done.book.state.positions.map((p) => p.ticket)).toEqual([2]);
    expect(done.cancel.map((o) => o.id).sort()).toEqual(['s1', 't1']);
  });

  it('one coin covers the buy positions of every market it is the base of', () => {
    const book = bookOf([position(1, 'buy', 0.1, 'BTC/USDT'), position(2, 'buy', 0.1, 'BTC/USDC')]);
    const done = reconcile(book, { positions: null, orders: protectionAtVenue(book), coins: spot({ BTC: 0.1 }) });
    expect(done.book.state.positions.map((p) => p.ticket)).toEqual([1]);
    expect(done.cancel.map((o) => o.id).sort()).toEqual(['s2', 't2']);
  });

  it("coins beyond the book's are the trader's own: no position not managed, nothing changed, nothing said", () => {
    const book = bookOf([position(1, 'buy', 0.1, 'BTC/USDT')]);
    const done = reconcile(book, {
      positions: null,
      orders: protectionAtVenue(book),
      coins: spot({ BTC: 2.5, ETH: 40, USDT: 10_000, BNB: 3 }),
    });
    expect(done.book).toEqual(book);
    expect(done.notManaged).toEqual([]);
    expect(done.findings).toEqual([]);
    expect(done.cancel).toEqual([]);
  });

  it('a stop of ours whose position is gone is cancelled though the account holds coins of its market (they are not a position)', () => {
    const orphan = venueOrder(
      'x1',
      `${clientOrderId('gone-signal', 'p7r0')}s`,
      'sell',
      0.1,
      'stop_loss',
      0,
      'BTC/USDT',
    );
    const done = reconcile(bookOf([]), { positions: null, orders: [orphan], coins: spot({ BTC: 1 }) });
    expect(done.cancel.map((o) => o.id)).toEqual(['x1']);
    expect(done.notManaged).toEqual([]);
  });

  it('a sell position (coins the account held before) and a market whose coin the venue did not name are left alone', () => {
    const book = bookOf([position(1, 'sell', 0.1, 'BTC/USDT'), position(2, 'buy', 0.1, 'SOL/USDT')]);
    const done = reconcile(book, { positions: null, orders: protectionAtVenue(book), coins: spot({}) });
    expect(done.book.state.positions.map((p) => p.ticket)).toEqual([1, 2]);
    expect(done.findings).toEqual([]);
  });

  it('a buy position whose stop is no longer open, its coins still held, is to be protected again and said at error (a spot stop is listed with the open orders, trigger or not)', () => {
    const book = bookOf([position(1, 'buy', 0.1, 'BTC/USDT')]);
    book.protection['1'] = { revision: 1, orders: [{ id: 's1', symbol: 'BTC/USDT', trigger: true }] };
    const done = reconcile(book, { positions: null, orders: [], coins: spot({ BTC: 0.1 }) });
    expect(done.book.state.positions.map((p) => p.ticket)).toEqual([1]);
    expect(done.reprotect).toEqual([1]);
    expect(done.cancel).toEqual([]);
    expect(done.findings).toEqual([
      expect.objectContaining({
        level: 'error',
        message: expect.stringContaining('none of the stop and target orders of position 1 is open'),
      }),
    ]);
    // Standing, or being moved (the move finishes it), or a sell (no coins to compare): nothing to do.
    const standing = [venueOrder('s1', null, 'sell', 0.1, 'stop_loss', 0, 'BTC/USDT')];
    expect(reconcile(book, { positions: null, orders: standing, coins: spot({ BTC: 0.1 }) }).reprotect).toEqual([]);
    const moving = { ...book, protection: { '1': { ...book.protection['1']!, moving: 2 } } };
    expect(reconcile(moving, { positions: null, orders: [], coins: spot({ BTC: 0.1 }) }).findings).toEqual([]);
    const sell = bookOf([position(1, 'sell', 0.1, 'BTC/USDT')]);
    expect(reconcile(sell, { positions: null, orders: [], coins: spot({}) }).findings).toEqual([]);
  });

  it('a buy position whose stop is no longer open while its target stands, its coins held, is to be protected again, said at error naming the stop', () => {
    const book = bookOf([position(1, 'buy', 0.1, 'BTC/USDT')]);
    book.protection['1'] = {
      revision: 1,
      orders: [
        { id: 's1', symbol: 'BTC/USDT', trigger: true },
        { id: 't1', symbol: 'BTC/USDT' },
      ],
    };
    const target = [venueOrder('t1', null, 'sell', 0.1, 'take_profit', 0, 'BTC/USDT')];
    const done = reconcile(book, { positions: null, orders: target, coins: spot({ BTC: 0.1 }) });
    expect(done.book.state.positions.map((p) => p.ticket)).toEqual([1]);
    expect(done.reprotect).toEqual([1]);
    expect(done.cancel).toEqual([]);
    expect(done.findings).toEqual([
      expect.objectContaining({
        level: 'error',
        message: expect.stringContaining('the stop order s1 of position 1 is not open at the venue any more'),
      }),
    ]);
    // The stop standing, the target gone: nothing to do.
    const stop = [venueOrder('s1', null, 'sell', 0.1, 'stop_loss', 0, 'BTC/USDT')];
    expect(reconcile(book, { positions: null, orders: stop, coins: spot({ BTC: 0.1 }) }).findings).toEqual([]);
  });

  it("whatever the book and the coins: the book's buy lots of each coin are what it had, at most what is held; nothing held is not managed", () => {
    const lots = fc.integer({ min: 1, max: 50 }).map((n) => n / 100);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(lots, fc.constantFrom('BTC/USDT', 'BTC/USDC', 'ETH/USDT')), { maxLength: 5 }),
        fc.record({ BTC: fc.integer({ min: 0, max: 300 }), ETH: fc.integer({ min: 0, max: 300 }) }),
        (bookPositions, cents) => {
          const book = bookOf(bookPositions.map(([v, sym], i) => position(i + 1, 'buy', v, sym)));
          const held = { BTC: cents.BTC / 100, ETH: cents.ETH / 100, USDT: 1000 };
          const done = reconcile(book, { positions: null, orders: protectionAtVenue(book), coins: spot(held) });
          expect(done.notManaged).toEqual([]);
          for (const coin of ['BTC', 'ETH'] as const) {
            const of = (ps: readonly Position[]) =>
              ps.filter((p) => p.symbol.startsWith(`${coin}/`)).reduce((sum, p) => sum + p.volume, 0);
            expect(of(done.book.state.positions)).toBeCloseTo(Math.min(of(book.state.positions), held[coin]), 8);
          }
          // Each position gone has its stop and target to cancel; each kept one keeps them.
          for (const d of done.dropped)
            expect(done.cancel.map((c) => c.id)).toEqual(
              expect.arrayContaining([`s${d.position.ticket}`, `t${d.position.ticket}`]),
            );
          for (const p of done.book.state.positions) expect(done.book.protection[String(p.ticket)]).toBeDefined();
        },
      ),
      { numRuns: 300 },
    );
  });
});
