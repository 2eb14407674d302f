import { describe, expect, it } from 'vitest';
import { lackingProtection, ProtectionWatch, readUnprotectedRule } from '../../src/agent/protection-state.js';
import type { VenueBook } from '../../src/agent/venue-book.js';
import { createEngineState, type Position } from '../../src/engine/index.js';

const position = (ticket: number, sl: number | null): Position => ({
  ticket,
  symbol: 'EURUSD',
  side: 'buy',
  volume: 0.1,
  originalVolume: 0.1,
  price: 1.1,
  sl,
  tp: [],
  tpNext: 0,
  comment: null,
  trail: null,
  breakeven: null,
  breakevenDone: false,
  openedAt: 0,
  signalId: `s${ticket}`,
});

describe('unprotected positions', () => {
  it('a position with a stop and no stop order at the venue lacks protection; one being moved or without a stop does not', () => {
    const book: VenueBook = {
      state: {
        ...createEngineState({ balance: 1000 }),
        positions: [position(1, 1.09), position(2, 1.09), position(3, null), position(4, 1.09)],
      },
      protection: {
        '2': { revision: 0, orders: [{ id: 'a', symbol: 'EURUSD' }] },
        '4': { revision: 0, orders: [], moving: 1 },
      },
      orders: {},
    };
    expect(lackingProtection(book).map((p) => p.ticket)).toEqual([1]);
  });

  it('keep: nothing said before the count, then told at most once a minute, the count going on', () => {
    const watch = new ProtectionWatch('keep', 3);
    expect(watch.refused(1, 'no stops', 0)).toEqual({ do: 'nothing' });
    expect(watch.refused(1, 'no stops', 2000)).toEqual({ do: 'nothing' });
    expect(watch.refused(1, 'no stops here', 4000)).toMatchObject({
      do: 'tell',
      entry: { reason: 'no stops here', attempts: 3, since: new Date(0).toISOString() },
    });
    expect(watch.refused(1, 'no stops', 6000)).toEqual({ do: 'nothing' });
    expect(watch.refused(1, 'no stops', 64_000)).toMatchObject({ do: 'tell', entry: { attempts: 5 } });
  });

  it('close: after the count, the verdict is to close; protected meanwhile, the count starts again', () => {
    const watch = new ProtectionWatch('close', 2);
    watch.refused(1, 'no', 0);
    watch.clear(1);
    expect(watch.refused(1, 'no', 10)).toEqual({ do: 'nothing' });
    expect(watch.refused(1, 'no', 20)).toMatchObject({ do: 'close', entry: { attempts: 2 } });
  });

  it('published only for positions still lacking protection', () => {
    const watch = new ProtectionWatch('keep', 3);
    watch.refused(1, 'no', 0);
    watch.seen(2, 'not there', 0);
    const shown = watch.published([position(2, 1.09)]);
    expect([...shown.keys()]).toEqual([2]);
    expect(shown.get(2)).toEqual({ reason: 'not there', attempts: 0, since: new Date(0).toISOString() });
  });

  it('the flags: keep after 3 by default; anything else refused naming the flag', () => {
    expect(readUnprotectedRule(undefined, undefined)).toEqual({ ok: true, rule: 'keep', after: 3 });
    expect(readUnprotectedRule('CLOSE', '1')).toEqual({ ok: true, rule: 'close', after: 1 });
    expect(readUnprotectedRule('flatten', undefined)).toMatchObject({
      ok: false,
      message: expect.stringContaining('--unprotected must be keep or close'),
    });
    expect(readUnprotectedRule(undefined, '0')).toMatchObject({
      ok: false,
      message: expect.stringContaining('--unprotected-after'),
    });
  });
});
