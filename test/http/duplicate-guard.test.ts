import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithAgents, sourceFor } from '../delivery/support/delivery-setup.js';
import { startTestServer, type TestServer } from '../support/start-test-server.js';

/**
 * The duplicate guard holds back only a signal that would do the same thing twice: an entry that
 * repeats the source's previous accepted signal within the window. Closes, cancels and position
 * targets change nothing when applied twice, so they always go through: a strategy that goes
 * long, flat, long, flat sends the same close twice within seconds, and both must execute.
 */
describe('the duplicate guard', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  const post = async (authKey: string, body: string) => {
    const res = await fetch(`${server.url}/api/inbound/${authKey}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body,
    });
    expect(res.status).toBe(202);
    return ((await res.json()) as { id: string }).id;
  };
  const statusOf = async (id: string) => (await server.admin('GET', `/api/admin/signals/${id}`)).body.status as string;

  it('lets every close of close → open → close through within the window, and still catches an entry fired twice', async () => {
    const { accountId } = await accountWithAgents(server, ['paper']);
    const { id: sourceId, authKey } = await sourceFor(server, accountId, { duplicateWindowSeconds: 10 });
    const sent = [
      'BTCUSDT,buy,vol=1',
      'BTCUSDT,closeall',
      'BTCUSDT,buy,vol=1',
      'BTCUSDT,closeall',
      'BTCUSDT,positionlong,vol=1',
      'BTCUSDT,positionlong,vol=1',
      'BTCUSDT,cancellong',
      'BTCUSDT,cancellong',
    ];
    const ids: string[] = [];
    for (const body of sent) ids.push(await post(authKey, body));
    // Each one its own signal, accepted and queued for the agent.
    expect(new Set(ids).size).toBe(sent.length);
    for (const id of ids) expect(await statusOf(id)).toBe('accepted');

    // TradingView firing one entry twice: the second is answered as the first, not executed again.
    const entry = await post(authKey, 'BTCUSDT,sell,vol=1,sl_pips=20');
    const again = await post(authKey, 'BTCUSDT,sell,vol=1,sl_pips=20');
    expect(again).toBe(entry);
    const log = (await server.admin('GET', `/api/admin/signals?status=duplicate&sourceId=${sourceId}`)).body.signals;
    expect(log.map((s: { duplicateOf: string }) => s.duplicateOf)).toEqual([entry]);
    // An entry that repeats one before the previous signal is a new signal.
    await post(authKey, 'BTCUSDT,closeall');
    expect(await post(authKey, 'BTCUSDT,sell,vol=1,sl_pips=20')).not.toBe(entry);
  });
});
