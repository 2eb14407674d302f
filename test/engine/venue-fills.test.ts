import { describe, expect, it } from 'vitest';
import { applyFill, applyTick, reviseClose, type ClosedEvent, type PartialCloseEvent } from '../../src/engine/index.js';
import { lots, pips, price, sig, simulation } from './simulation.js';

describe("fills the venue made on its own, applied at the venue's price and lots", () => {
  it('a pending order filled by the venue becomes a position at the fill price, keeping its stop and targets', () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.105, 1.1052);
    sim.signal(
      sig('EURUSD', 'buylimit', {
        volume: lots(0.5),
        entry: price(1.104),
        sl: pips(30),
        tp: [{ type: 'pips', value: 50, pct: 100 }],
      }),
    );
    const step = applyFill(sim.state, { type: 'order_filled', order: 1, price: 1.1039, volume: null }, 10);
    expect(step.state.orders).toEqual([]);
    expect(step.state.positions).toMatchObject([
      { ticket: 2, side: 'buy', volume: 0.5, price: 1.1039, sl: 1.101, tp: [{ price: 1.109 }] },
    ]);
    expect(step.events.map((e) => e.type)).toEqual(['order_filled', 'opened']);
  });

  it('where the venue fills entries, a tick crossing a pending entry leaves it pending and still manages the open positions', () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.105, 1.1052);
    sim.signal(sig('EURUSD', 'buy', { volume: lots(0.1), sl: pips(20), breakeven: { trigger: 10, offset: 0 } }));
    sim.signal(sig('EURUSD', 'selllimit', { volume: lots(0.5), entry: price(1.106), sl: pips(30) }));
    // Bid 1.1063 reaches the sell limit (1.106) and puts the buy 11 pips in profit.
    const venue = applyTick(
      sim.state,
      { time: 10, symbol: 'EURUSD', bid: 1.1063, ask: 1.1065 },
      { entries: 'venue', exits: 'engine' },
    );
    expect(venue.state.orders).toMatchObject([{ ticket: 2, side: 'sell', kind: 'limit', price: 1.106 }]);
    expect(venue.state.positions).toMatchObject([{ ticket: 1, side: 'buy', sl: 1.1052 }]);
    expect(venue.events.map((e) => e.type)).toEqual(['sl_moved']);
    expect(venue.state.quotes.EURUSD).toEqual({ bid: 1.1063, ask: 1.1065 });
    // Where the engine fills them (the default), the same tick fills it.
    const engine = applyTick(sim.state, { time: 10, symbol: 'EURUSD', bid: 1.1063, ask: 1.1065 });
    expect(engine.state.orders).toEqual([]);
    expect(engine.events.map((e) => e.type)).toEqual(['order_filled', 'opened', 'sl_moved']);
  });

  it('where the venue fills exits, a tick past the stop or a target closes nothing, and breakeven still moves the stop', () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.105, 1.1052);
    sim.signal(
      sig('EURUSD', 'buy', {
        volume: lots(0.1),
        sl: pips(20),
        tp: [
          { type: 'pips', value: 10, pct: 50 },
          { type: 'pips', value: 30, pct: 50 },
        ],
        breakeven: { trigger: 10, offset: 0 },
      }),
    );
    const rules = { entries: 'venue', exits: 'venue' } as const;
    // Bid 1.1063: past the first target (1.1062) and 11 pips in profit.
    const up = applyTick(sim.state, { time: 10, symbol: 'EURUSD', bid: 1.1063, ask: 1.1065 }, rules);
    expect(up.state.positions).toMatchObject([{ ticket: 1, volume: 0.1, tpNext: 0, sl: 1.1052 }]);
    expect(up.events.map((e) => e.type)).toEqual(['sl_moved']);
    // Bid 1.1040: below the stop; the venue's report closes it, not the tick.
    const down = applyTick(up.state, { time: 11, symbol: 'EURUSD', bid: 1.104, ask: 1.1042 }, rules);
    expect(down.state.positions).toMatchObject([{ ticket: 1, volume: 0.1 }]);
    expect(down.events).toEqual([]);
  });

  it("a target filled by the venue closes its share and moves to the next level; a stop closes the rest at the stop's fill price", () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.105, 1.1052);
    sim.signal(
      sig('EURUSD', 'buy', {
        volume: lots(1),
        sl: pips(20),
        tp: [
          { type: 'pips', value: 20, pct: 50 },
          { type: 'pips', value: 40, pct: 50 },
        ],
      }),
    );
    const first = applyFill(
      sim.state,
      { type: 'position_closed', position: 1, volume: 0.5, price: 1.1072, reason: 'tp' },
      10,
    );
    expect(first.state.positions).toMatchObject([{ ticket: 1, volume: 0.5, tpNext: 1 }]);
    expect(first.events).toMatchObject([
      { type: 'partial_close', position: 1, volume: 0.5, price: 1.1072, profit: 100 },
    ]);
    const second = applyFill(
      first.state,
      { type: 'position_closed', position: 1, volume: 0.5, price: 1.1029, reason: 'sl' },
      11,
    );
    expect(second.state.positions).toEqual([]);
    expect(second.events).toMatchObject([
      { type: 'closed', position: 1, volume: 0.5, price: 1.1029, reason: 'sl', profit: -115 },
    ]);
  });

  it('an order or position the book no longer holds changes nothing', () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.105, 1.1052);
    const before = sim.state;
    expect(applyFill(before, { type: 'order_filled', order: 7, price: 1.1, volume: null }, 1)).toEqual({
      state: before,
      events: [],
    });
    expect(applyFill(before, { type: 'position_closed', position: 7, volume: 1, price: 1.1, reason: 'sl' }, 1)).toEqual(
      { state: before, events: [] },
    );
  });

  it('a close the venue filled in part: the position stays open with the rest, the balance has the profit of the lots filled at their price', () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.105, 1.1052);
    sim.signal(sig('EURUSD', 'buy', { volume: lots(0.1), sl: pips(20) }));
    const was = sim.state.positions[0]!;
    const close = sim.signal(sig('EURUSD', 'closebuy', {}));
    const event = close.events[0] as ClosedEvent;
    expect(event).toMatchObject({ type: 'closed', volume: 0.1, price: 1.105, profit: -2 });
    expect(close.state.balance).toBe(9998);
    const revised = reviseClose(close.state, was, event, { volume: 0.03, price: 1.106 });
    expect(revised.event).toEqual({
      type: 'partial_close',
      time: event.time,
      position: was.ticket,
      volume: 0.03,
      requested: 0.1,
      price: 1.106,
      profit: 2.4,
    });
    expect(revised.state.positions).toEqual([{ ...was, volume: 0.07 }]);
    expect(revised.state.balance).toBe(10_002.4);
  });

  it('a partial close the venue filled in part or at another price: only the lots filled leave the position', () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.105, 1.1052);
    sim.signal(sig('EURUSD', 'buy', { volume: lots(0.1) }));
    const was = sim.state.positions[0]!;
    const close = sim.signal(sig('EURUSD', 'closebuy', { close: { pct: 50 } }));
    const event = close.events[0] as PartialCloseEvent;
    expect(event).toMatchObject({ type: 'partial_close', volume: 0.05 });
    const part = reviseClose(close.state, was, event, { volume: 0.02, price: 1.105 });
    expect(part.event).toMatchObject({ type: 'partial_close', volume: 0.02, requested: 0.05, profit: -0.4 });
    expect(part.state.positions).toMatchObject([{ ticket: was.ticket, volume: 0.08 }]);
    expect(part.state.balance).toBe(9999.6);
    // All the lots asked, at another price: no `requested`, the profit at that price.
    const priced = reviseClose(close.state, was, event, { volume: 0.05, price: 1.1062 });
    expect(priced.event).toEqual({ ...event, price: 1.1062, profit: 5 });
    expect(priced.state.positions).toMatchObject([{ ticket: was.ticket, volume: 0.05 }]);
  });
});
