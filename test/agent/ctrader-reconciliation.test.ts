import { describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { AgentProcess } from './support/agent-process.js';
import { EURUSD, useCTraderBed } from './support/ctrader-bed.js';

/**
 * The broker is the truth: a real agent process against the cTrader-style counterparty, whose
 * positions and orders the test changes behind the agent's back (a hand close, a broker that
 * leaves a closed position's orders standing, a position nobody asked for, stops refused). The
 * agent's book and published state follow the broker, and nothing it holds is dropped in silence.
 * Reconciliation runs every 5 s (the default), the management pass every 2 s.
 */
describe('reconciliation with a cTrader-style broker', () => {
  const bed = useCTraderBed();
  let agent: AgentProcess;

  /** The broker's orders tied to a position: kind, units, ClOrdID. */
  const tied = (positionId: string) =>
    [...bed.broker.resting.values()]
      .filter((o) => o.positionId === positionId)
      .map((o) => [o.kind, o.units, o.clOrdId]);
  const positions = async (): Promise<any[]> => (await bed.state())?.positions ?? [];
  /** Opens `text` and answers the broker's position id it made. */
  const open = async (text: string): Promise<{ signal: string; positionId: string; delivery: any }> => {
    const before = new Set(bed.broker.positions.keys());
    const signal = await postSignal(bed.server.url, bed.authKey, text);
    const delivery = await bed.settled(signal);
    const positionId = [...bed.broker.positions.keys()].find((id) => !before.has(id))!;
    await waitUntil(async () => (await positions()).length > 0, 'the position in the published state');
    return { signal, positionId, delivery };
  };

  it('a position the broker closed while the agent was down, its stop and target left standing there: after the restart it leaves the book and they are cancelled (failed before: they stayed)', async () => {
    agent = await bed.startReady();
    const { positionId } = await open('EURUSD,buy,vol=0.1,sl_pips=20,tp_pips=40');
    expect(tied(positionId)).toHaveLength(2);
    await agent.stop();
    // A broker that does not cancel a closed position's orders (as an exchange's conditional orders are not).
    bed.broker.positions.delete(positionId);
    const cancelsBefore = bed.sent('F').length;
    agent = await bed.startReady();
    await waitUntil(() => tied(positionId).length === 0, 'the stop and target cancelled at the broker');
    expect(await positions()).toEqual([]);
    // Once each, and never again at the following passes.
    await new Promise((r) => setTimeout(r, 6000));
    expect(
      agent.lines().some((l) => typeof l.msg === 'string' && l.msg.includes('the venue no longer holds this position')),
    ).toBe(true);
    expect(bed.sent('F').length - cancelsBefore).toBe(2);
  }, 90_000);

  it('a position reduced at the broker by hand shrinks in the book, gets a stop and target of its new size; closed by hand, it leaves the book (failed before: the book kept 0.1 for ever)', async () => {
    const { positionId } = await open('EURUSD,buy,vol=0.1,sl_pips=20,tp_pips=40');
    bed.broker.positions.get(positionId)!.units = 4000;
    await waitUntil(
      async () => (await positions())[0]?.volume === 0.04,
      'the position at 0.04 in the published state',
      20_000,
    );
    await waitUntil(
      () => tied(positionId).length === 2 && tied(positionId).every((o) => o[1] === 4000),
      'a stop and target of 4000 units alone at the broker',
      20_000,
    );
    expect(
      tied(positionId)
        .map((o) => o[0])
        .sort(),
    ).toEqual(['limit', 'stop']);
    bed.broker.closePosition(positionId);
    await waitUntil(async () => (await positions()).length === 0, 'the position gone from the published state', 20_000);
  }, 90_000);

  it('a position and an order at the broker the book lacks are published as not managed and logged at error; a stop of ours for a gone position is cancelled (failed before: ignored in silence)', async () => {
    bed.broker.positions.set('7777', { id: '7777', symbol: EURUSD, side: 'sell', units: 20000, price: 1.1 });
    const orphan = `${clientOrderId('long-gone-signal', 'p42r0')}s`;
    bed.broker.resting.set('8801', {
      id: '8801',
      clOrdId: orphan,
      symbol: EURUSD,
      side: 'sell',
      kind: 'stop',
      units: 5000,
      price: 1.09,
      positionId: null,
      cumUnits: 0,
      avgPx: 0,
      opened: null,
    });
    bed.broker.resting.set('8802', {
      id: '8802',
      clOrdId: 'placed-by-hand',
      symbol: EURUSD,
      side: 'buy',
      kind: 'limit',
      units: 3000,
      price: 1.08,
      positionId: null,
      cumUnits: 0,
      avgPx: 0,
      opened: null,
    });
    await waitUntil(
      async () => ((await bed.state())?.notManaged ?? []).length === 2,
      'two holdings not managed in the published state',
      20_000,
    );
    const shown = (await bed.state()).notManaged;
    expect(shown.map((n: any) => [n.kind, n.id, n.side, n.volume])).toEqual([
      ['position', '7777', 'sell', 0.2],
      ['order', '8802', 'buy', 0.03],
    ]);
    expect(bed.broker.resting.has('8801')).toBe(false);
    expect(bed.sent('F').some((m) => m.OrderID === '8801')).toBe(true);
    // The log reaches this process through the agent's stdout, after the state it published.
    const errors = () =>
      agent.lines().filter((l) => l.level === 50 && typeof l.msg === 'string' && l.msg.includes('does not manage'));
    await waitUntil(async () => errors().length >= 2, 'the two not-managed holdings logged at error', 20_000);
    expect(errors()).toHaveLength(2);
    // Gone from the broker, gone from the state.
    bed.broker.positions.delete('7777');
    bed.broker.resting.delete('8802');
    await waitUntil(
      async () => ((await bed.state())?.notManaged ?? []).length === 0,
      'nothing not managed any more',
      20_000,
    );
  }, 90_000);

  it('a stop the broker refuses: the position is published unprotected, the stop tried at every pass and placed once the broker takes it (failed before: published with its sl as if protected, never tried again)', async () => {
    const refusal = 'TRADING_BAD_STOPS: stop orders are disabled';
    bed.broker.refuseStops = refusal;
    const { positionId, delivery } = await open('EURUSD,buy,vol=0.05,sl_pips=20');
    expect(delivery.message).toContain('NOT protected');
    await waitUntil(
      async () => (await positions())[0]?.unprotected?.attempts >= 3,
      'three refusals in the published state',
      20_000,
    );
    const [shown] = await positions();
    expect(shown.sl).toBe(1.1032);
    expect(shown.unprotected.reason).toContain(refusal);
    expect(Date.parse(shown.unprotected.since)).toBeLessThanOrEqual(Date.now());
    await agent.waitForLog(
      (l) => l.level === 50 && typeof l.msg === 'string' && l.msg.includes('--unprotected keep'),
      'the kept position told at error',
    );
    expect(bed.broker.positions.has(positionId)).toBe(true);
    bed.broker.refuseStops = null;
    await waitUntil(() => tied(positionId).length === 1, 'the stop at the broker', 20_000);
    await waitUntil(
      async () => (await positions())[0]?.unprotected === undefined,
      'protected in the published state',
      20_000,
    );
    const close = await postSignal(bed.server.url, bed.authKey, 'EURUSD,closebuy');
    await bed.settled(close);
    await waitUntil(async () => (await positions()).length === 0, 'flat');
  }, 90_000);

  it('--unprotected close --unprotected-after 2: the position whose stop is refused twice is closed at the market', async () => {
    await agent.stop();
    agent = await bed.startReady(['--unprotected', 'close', '--unprotected-after', '2']);
    bed.broker.refuseStops = 'TRADING_BAD_STOPS: stop orders are disabled';
    const { positionId } = await open('EURUSD,buy,vol=0.03,sl_pips=20');
    await waitUntil(() => !bed.broker.positions.has(positionId), 'the position closed at the broker', 20_000);
    await waitUntil(async () => (await positions()).length === 0, 'no position in the published state', 20_000);
    await waitUntil(
      async () =>
        agent
          .lines()
          .some((l) => l.level === 50 && typeof l.msg === 'string' && l.msg.includes('closing it at the market')),
      'the close at the market logged at error',
    );
    bed.broker.refuseStops = null;
  }, 90_000);
});
