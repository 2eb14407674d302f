import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoggedTestServer, type LoggedTestServer } from '../support/logged-test-server.js';
import { TEST_ADMIN_TOKEN } from '../support/start-test-server.js';
import { accountWithAgents, postSignal, sourceFor, waitUntil } from './support/delivery-setup.js';

/**
 * A signal whose agent never comes back: the server itself marks its delivery expired soon
 * after the deadline, with the warn line and the metric, without any poll of that agent.
 */
describe('the expiry sweep', () => {
  let server: LoggedTestServer;
  beforeAll(async () => {
    server = await startLoggedTestServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('expires a delivery whose agent never connected, logs it once and counts it', async () => {
    const { accountId, agents } = await accountWithAgents(server, ['never-connected']);
    const absent = agents[0]!;
    // Queued under a long age, then the age lowered to a second (which applies to signals not yet
    // acknowledged): a 1 s age from the start could pass before the first look on a loaded machine.
    const source = await sourceFor(server, accountId, { maxSignalAgeSeconds: 3600 });
    const id = await postSignal(server.url, source.authKey, 'EURUSD,buy,vol=0.1');
    const record = async () => (await server.admin('GET', `/api/admin/signals/${id}`)).body;
    expect((await record()).outcome).toEqual({ queued: 1 });
    expect((await server.admin('PATCH', `/api/admin/sources/${source.id}`, { maxSignalAgeSeconds: 1 })).status).toBe(
      200,
    );

    await waitUntil(async () => (await record()).outcome.expired === 1, 'the sweep to expire the delivery');
    const shown = await record();
    expect(shown.outcome).toEqual({ expired: 1 });
    expect(shown.deliveries).toEqual([
      expect.objectContaining({ agentId: absent.id, status: 'expired', attempts: 0, deliveredAt: null }),
    ]);
    const listed = await server.admin('GET', `/api/admin/signals?outcome=expired&sourceId=${source.id}`);
    expect(listed.body.signals.map((item: { id: string }) => item.id)).toEqual([id]);

    // Two more sweeps have run, whatever the machine's load: each expired a signal posted after
    // the one before had finished (sweeps never overlap, and a sweep logs before it returns).
    // Each line is still written once.
    const later: string[] = [];
    for (let sweep = 0; sweep < 2; sweep++) {
      const next = await postSignal(server.url, source.authKey, 'EURUSD,sell,vol=0.1');
      later.push(next);
      await waitUntil(
        async () => (await server.admin('GET', `/api/admin/signals/${next}`)).body.outcome.expired === 1,
        'a later sweep',
      );
    }
    // The metric and the warn lines are written by the store's expiry watchers, together, just
    // after the commit the admin API already shows: read once the metric has counted all three.
    const scrape = async () =>
      (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })).text();
    const expiredCount = (text: string) =>
      Number(/^signalgate_deliveries_total\{status="expired"\} (\d+)$/m.exec(text)?.[1] ?? 0);
    let metrics = '';
    await waitUntil(async () => expiredCount((metrics = await scrape())) >= 3, 'the three expiries counted');
    expect(metrics).toMatch(/^signalgate_deliveries_total\{status="expired"\} 3$/m);
    for (const signalId of [id, ...later]) {
      const warnings = server.logLines().filter((line) => line.level === 40 && line.signalId === signalId);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ agentId: absent.id, signalId });
      expect(warnings[0]!.msg).toContain('expired');
      expect(warnings[0]!.lateMs).toBeGreaterThanOrEqual(0);
      expect(warnings[0]!.ageMs).toBeGreaterThanOrEqual(1000);
    }
  });
});
