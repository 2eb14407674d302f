import { describe, expect, it } from 'vitest';
import { createEngineState, type Position } from '../../src/engine/index.js';
import type { VenueBook } from '../../src/agent/venue-book.js';
import { applyReports } from '../../src/agent/venue-reports.js';
import type { Protection, Venue, VenueOrder, VenueOrderRef } from '../../src/agent/venue.js';

const long: Position = {
  ticket: 1,
  symbol: 'EURUSD',
  side: 'buy',
  volume: 0.05,
  originalVolume: 0.05,
  price: 1.104,
  sl: 1.101,
  tp: [{ price: 1.109, pct: 100 }],
  tpNext: 0,
  comment: null,
  trail: null,
  breakeven: null,
  breakevenDone: false,
  openedAt: 0,
  signalId: 'sig-1',
};

const stopOrder = (filled: number): VenueOrder => ({
  id: 'S',
  clientId: 'sgstop',
  symbol: 'EURUSD',
  side: 'sell',
  kind: 'stop_loss',
  volume: 0.05,
  price: 1.101,
  status: 'filled',
  filled,
  average: filled > 0 ? 1.101 : null,
  fills: [],
});

/** A venue that takes every protection and cancel, and says what it was asked. */
function recordingVenue() {
  const protections: Protection[] = [];
  const cancelled: string[] = [];
  const venue = {
    name: 'test',
    protect: async (_position: unknown, protection: Protection) => {
      protections.push(protection);
      return [{ ...stopOrder(0), id: `S${protections.length}`, status: 'open' }];
    },
    cancel: async (order: VenueOrderRef) => {
      cancelled.push(order.id);
      return null;
    },
  } as unknown as Venue;
  return { venue, protections, cancelled };
}

describe("a bust of a stop's fill applied to the book", () => {
  it('gives the closed position back with its lots, the balance without the loss, protected under the next revision', async () => {
    const { venue, protections, cancelled } = recordingVenue();
    const book: VenueBook = {
      state: { ...createEngineState({ balance: 10_000 }), positions: [long], nextTicket: 2 },
      protection: {
        '1': {
          revision: 0,
          orders: [
            { id: 'S', symbol: 'EURUSD' },
            { id: 'T', symbol: 'EURUSD' },
          ],
        },
      },
      orders: {},
    };
    const stopped = await applyReports(
      venue,
      book,
      [
        {
          type: 'position_reduced',
          symbol: 'EURUSD',
          side: 'buy',
          volume: 0.05,
          price: 1.101,
          by: 'stop_loss',
          order: stopOrder(0.05),
        },
      ],
      1,
    );
    expect(stopped.book.state.positions).toEqual([]);
    expect(stopped.book.state.balance).toBe(9985);
    expect(cancelled).toEqual(['T']);
    expect(stopped.book.exits?.S).toMatchObject({ lots: 0.05, profit: -15, revision: 0 });

    const busted = await applyReports(
      venue,
      stopped.book,
      [{ type: 'fill_busted', order: stopOrder(0), lots: 0.05 }],
      2,
    );
    expect(busted.book.state.positions).toEqual([long]);
    expect(busted.book.state.balance).toBe(10_000);
    expect(busted.book.exits).toEqual({});
    expect(protections.map((p) => [p.clientId.slice(-2), p.stop, p.targets, p.replaces])).toEqual([
      ['r1', 1.101, [{ price: 1.109, volume: 0.05 }], []],
    ]);
    expect(busted.book.protection['1']).toMatchObject({ revision: 1, orders: [{ id: 'S1' }] });
    expect(busted.warnings.join('\n')).toMatch(/took back 0\.05 lots of the fill of stop order S \(a bust\)/);

    // Told again (a resent report): no fill is kept for it any more, so nothing is given twice.
    const again = await applyReports(venue, busted.book, [{ type: 'fill_busted', order: stopOrder(0), lots: 0.05 }], 3);
    expect(again.book.state.positions).toEqual([long]);
    expect(again.warnings.join('\n')).toMatch(/a fill the book does not hold/);
  });
});
