import { describe, expect, it } from 'vitest';
import type { EngineState, Position } from '../../src/engine/index.js';
import { mergeLane } from '../../src/agent/lane-merge.js';
import type { VenueBook } from '../../src/agent/venue-book.js';

const position = (ticket: number, symbol: string) => ({ ticket, symbol }) as unknown as Position;
const book = (balance: number, nextTicket: number, positions: Position[], protection: VenueBook['protection']) =>
  ({
    state: { balance, nextTicket, positions, orders: [], quotes: {}, config: {} } as unknown as EngineState,
    protection,
    orders: {},
  }) as VenueBook;
const stop = (id: string) => ({ revision: 0, orders: [{ id, symbol: 'x' }] });

describe("a symbol lane's book merged into the book as it stands", () => {
  it("takes the lane's symbol from the lane and everything else, with the others' changes, from the book", () => {
    const base = book(1000, 3, [position(1, 'BTC')], { '1': stop('s1') });
    // Meanwhile ETH's lane opened position 2 and took a loss of 5.
    const live = book(995, 4, [position(1, 'BTC'), position(2, 'ETH')], { '1': stop('s1'), '2': stop('s2') });
    // BTC's lane closed position 1 at a profit of 10 and opened position 3.
    const result = book(1010, 4, [position(3, 'BTC')], { '3': stop('s3') });
    const merged = mergeLane(live, base, result, 'BTC');
    expect(merged.state.positions.map((p) => p.ticket)).toEqual([2, 3]);
    expect(merged.state.balance).toBe(1005);
    expect(merged.state.nextTicket).toBe(4);
    expect(Object.keys(merged.protection).sort()).toEqual(['2', '3']);
  });

  it("is the lane's book when nothing else changed meanwhile", () => {
    const base = book(1000, 2, [position(1, 'BTC')], {});
    const result = book(1010, 2, [], {});
    expect(mergeLane(base, base, result, 'BTC')).toBe(result);
  });

  it('keeps the exit fills held for busts, and adds those a lane kept (its closes), whether or not the book moved meanwhile', () => {
    const fill = (ticket: number) => ({ position: position(ticket, 'BTC'), revision: 0, lots: 1, price: 2, profit: 3 });
    const base = { ...book(1000, 2, [], {}), exits: { B4: fill(1) } };
    // A lane's result built field by field (a tick's) carries none.
    const tick = book(1000, 2, [position(2, 'BTC')], {});
    expect(mergeLane(base, base, tick, 'BTC').exits).toEqual({ B4: fill(1) });
    // A close signal's lane kept its close's fill.
    const closed = { ...book(1003, 3, [], {}), exits: { B4: fill(1), C9: fill(2) } };
    expect(mergeLane(base, base, closed, 'BTC').exits).toEqual({ B4: fill(1), C9: fill(2) });
    const live = { ...book(990, 3, [position(3, 'ETH')], {}), exits: { B4: fill(1), E7: fill(3) } };
    expect(mergeLane(live, base, tick, 'BTC').exits).toEqual({ B4: fill(1), E7: fill(3) });
    expect(mergeLane(live, base, closed, 'BTC').exits).toEqual({ B4: fill(1), E7: fill(3), C9: fill(2) });
  });
});
