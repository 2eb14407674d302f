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
    const source = await sourceFor(server, accountId, { maxSignalAgeSeconds: 1 });
    const id = await postSignal(server.url, source.authKey, 'EURUSD,buy,vol=0.1');
    const record = async () => (await server.admin('GET', `/api/admin/signals/${id}`)).body;
    expect((await record()).outcome).toEqual({ queued: 1 });

    await waitUntil(async () => (await record()).outcome.expired === 1, 'the sweep to expire the delivery', 15_000);
    const shown = await record();
    expect(shown.outcome).toEqual({ expired: 1 });
    expect(shown.deliveries).toEqual([expect.objectContaining({ agentId: absent.id, status: 'expired', attempts: 0, deliveredAt: null })]);
    const listed = await server.admin('GET', `/api/admin/signals?outcome=expired&sourceId=${source.id}`);
    expect(listed.body.signals.map((item: { id: string }) => item.id)).toEqual([id]);

    // Two more sweeps' time: the line is written once.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const warnings = server.logLines().filter((line) => line.level === 40 && line.signalId === id);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ agentId: absent.id, signalId: id });
    expect(warnings[0]!.msg).toContain('expired');
    expect(warnings[0]!.lateMs).toBeGreaterThanOrEqual(0);
    expect(warnings[0]!.ageMs).toBeGreaterThanOrEqual(1000);

    const metrics = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })).text();
    expect(metrics).toMatch(/^signalgate_deliveries_total\{status="expired"\} 1$/m);
  });
});
