import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import { EURUSD, useCTraderBed } from './support/ctrader-bed.js';

/**
 * Closes the cTrader-style broker fills in part (ExecType F with OrdStatus 1, then the rest
 * cancelled, 150=4 with CumQty the part) or not at all (cancelled with nothing filled). The
 * signal's outcome, the agent's book and its published state say what the broker filled, and the
 * lots the broker still holds keep a stop and a target of exactly those lots.
 */
describe('closes a cTrader-style FIX 4.4 broker fills in part', () => {
  const bed = useCTraderBed();

  /** The broker's orders tied to a position: kind, price, units. */
  const held = (positionId: string) =>
    [...bed.broker.resting.values()].filter((o) => o.positionId === positionId).map((o) => [o.kind, o.price, o.units]);
  const published = async (comment: string) =>
    ((await bed.state())?.positions ?? []).find((p: { comment: string | null }) => p.comment === comment);

  /** Opens a buy of 0.1 (stop 20 pips, target 40) tagged `comment`, filled whole at 1.1052: the broker's position id and the book's ticket. */
  const open = async (comment: string) => {
    const before = new Set(bed.broker.positions.keys());
    const signal = await postSignal(
      bed.server.url,
      bed.authKey,
      `EURUSD,buy,vol=0.1,sl_pips=20,tp_pips=40,comment=${comment}`,
    );
    const delivery = await bed.settled(signal);
    const position = [...bed.broker.positions.values()].find((p) => !before.has(p.id))!;
    expect(position).toMatchObject({ side: 'buy', units: 10000, price: 1.1052 });
    expect(held(position.id)).toEqual([
      ['stop', 1.1032, 10000],
      ['limit', 1.1092, 10000],
    ]);
    await waitUntil(async () => (await published(comment)) !== undefined, 'the position in the published state');
    return { positionId: position.id, ticket: delivery.result.events[0].position as number };
  };

  beforeAll(async () => {
    await bed.startReady();
  });

  beforeEach(() => {
    bed.broker.partialClose = null;
    bed.broker.setPrice(EURUSD, 1.105, 1.1052);
  });

  it('a whole close filled in part: the position stays open with the lots the broker holds, protected for exactly those, and the outcome says so', async () => {
    const { positionId, ticket } = await open('whole');
    bed.broker.setPrice(EURUSD, 1.106, 1.1062);
    bed.broker.partialClose = { units: 3000 };
    const signal = await postSignal(bed.server.url, bed.authKey, 'EURUSD,closebuy,comment=whole');
    const delivery = await bed.settled(signal);
    bed.broker.partialClose = null;

    // The broker filled 0.03 at its bid and cancelled the rest.
    expect(bed.broker.positions.get(positionId)).toMatchObject({ units: 7000 });
    expect(delivery.result.orders[0]).toMatchObject({
      clientId: clientOrderId(signal, 'c1'),
      kind: 'market',
      side: 'sell',
      volume: 0.1,
      filled: 0.03,
      average: 1.106,
      status: 'cancelled',
    });
    expect(delivery.result.events[0]).toEqual({
      type: 'partial_close',
      time: expect.any(Number),
      position: ticket,
      volume: 0.03,
      requested: 0.1,
      price: 1.106,
      profit: 2.4,
    });
    expect(delivery.message).toBe(
      `closed 0.03 of 0.1 lots of position ${ticket} at 1.106, profit 2.4; fix:cServer filled 0.03 of the 0.1 lots asked: position ${ticket} stays open with 0.07 lots`,
    );
    // The 0.07 lots left keep a stop and a target of exactly their lots, and nothing else.
    expect(held(positionId)).toEqual([
      ['stop', 1.1032, 7000],
      ['limit', 1.1092, 7000],
    ]);
    await waitUntil(
      async () => (await published('whole'))?.volume === 0.07,
      'the position left in the published state',
    );
    expect(await published('whole')).toMatchObject({
      position: ticket,
      side: 'buy',
      volume: 0.07,
      price: 1.1052,
      sl: 1.1032,
    });

    // The book holds those lots: the next close closes them, and the broker's position is gone.
    const again = await postSignal(bed.server.url, bed.authKey, 'EURUSD,closebuy,comment=whole');
    const rest = await bed.settled(again);
    expect(rest.result.events[0]).toMatchObject({ type: 'closed', position: ticket, volume: 0.07, price: 1.106 });
    expect(bed.broker.positions.has(positionId)).toBe(false);
    expect(held(positionId)).toEqual([]);
    await waitUntil(async () => (await published('whole')) === undefined, 'the position gone from the published state');
  });

  it('a partial close filled in part: the position keeps what the broker holds, re-protected for it', async () => {
    const { positionId, ticket } = await open('half');
    bed.broker.partialClose = { units: 2000 };
    const signal = await postSignal(bed.server.url, bed.authKey, 'EURUSD,closebuy,pct=50,comment=half');
    const delivery = await bed.settled(signal);
    bed.broker.partialClose = null;

    expect(bed.broker.positions.get(positionId)).toMatchObject({ units: 8000 });
    expect(delivery.result.events[0]).toMatchObject({
      type: 'partial_close',
      position: ticket,
      volume: 0.02,
      requested: 0.05,
      price: 1.105,
    });
    expect(delivery.message).toMatch(
      new RegExp(
        `^closed 0\\.02 of 0\\.05 lots of position ${ticket} at 1\\.105, profit -0\\.4; .*stays open with 0\\.08 lots$`,
      ),
    );
    expect(held(positionId)).toEqual([
      ['stop', 1.1032, 8000],
      ['limit', 1.1092, 8000],
    ]);
    await waitUntil(async () => (await published('half'))?.volume === 0.08, 'the position left in the published state');
  });

  it('a close the broker cancels without filling a lot: rejected with its reason, and the position, its protection and the book unchanged', async () => {
    const { positionId, ticket } = await open('none');
    const protection = [...bed.broker.resting.values()]
      .filter((o) => o.positionId === positionId)
      .map((o) => o.clOrdId);
    bed.broker.partialClose = { units: 0 };
    const signal = await postSignal(bed.server.url, bed.authKey, 'EURUSD,closebuy,comment=none');
    const delivery = await bed.settled(signal, 'rejected');
    bed.broker.partialClose = null;

    expect(delivery.message).toBe(
      `fix:cServer refused closing 0.1 of position ${ticket} (buy 1): it filled none of the 0.1 lots (the order ended cancelled: the order found no liquidity)`,
    );
    expect(delivery.result.orders).toMatchObject([
      { kind: 'market', volume: 0.1, filled: 0, status: 'cancelled', reason: 'the order found no liquidity' },
    ]);
    expect(bed.broker.positions.get(positionId)).toMatchObject({ units: 10000 });
    // The same stop and target stand: nothing was cancelled or placed for the position.
    expect([...bed.broker.resting.values()].filter((o) => o.positionId === positionId).map((o) => o.clOrdId)).toEqual(
      protection,
    );
    expect(held(positionId)).toEqual([
      ['stop', 1.1032, 10000],
      ['limit', 1.1092, 10000],
    ]);
    // The book still holds the whole position: a close after it closes all of it.
    const again = await postSignal(bed.server.url, bed.authKey, 'EURUSD,closebuy,comment=none');
    const closed = await bed.settled(again);
    expect(closed.result.events[0]).toMatchObject({ type: 'closed', position: ticket, volume: 0.1 });
    expect(bed.broker.positions.has(positionId)).toBe(false);
    await waitUntil(async () => (await published('none')) === undefined, 'the position gone from the published state');
  });
});
