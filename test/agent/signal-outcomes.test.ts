import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithAgents, sourceFor, waitUntil } from '../delivery/support/delivery-setup.js';
import { startLoggedTestServer, type LoggedTestServer } from '../support/logged-test-server.js';
import { AgentProcess } from './support/agent-process.js';

/**
 * "Did my alert trade, and if not, why?", answered by the signal log: each signal's outcome
 * (its deliveries by status) once a real agent executed, rejected, or missed its deadline; and
 * the warnings an operator reads in the server's log when a signal can never be executed.
 */
describe('what became of a signal', () => {
  let server: LoggedTestServer;
  const agents: AgentProcess[] = [];
  const dirs: string[] = [];
  const dir = () => {
    const made = mkdtempSync(path.join(tmpdir(), 'signalgate-outcome-'));
    dirs.push(made);
    return made;
  };
  beforeAll(async () => {
    server = await startLoggedTestServer();
  });
  afterAll(async () => {
    for (const agent of agents) await agent.kill();
    await server?.stop();
    for (const made of dirs) rmSync(made, { recursive: true, force: true });
  });

  const post = async (authKey: string, body: string) => {
    const res = await fetch(`${server.url}/api/inbound/${authKey}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body,
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  it('shows executed, rejected and expired deliveries on the record, the list and its filters, and warns of each expiry', async () => {
    const {
      accountId,
      agents: [paper, late],
    } = await accountWithAgents(server, ['paper', 'late']);
    // A long age while the paper agent takes its signals (a 2 s age could run out before the push
    // reaches it on a loaded machine), lowered to 2 s once it has acknowledged them: that applies
    // to the deliveries not yet acknowledged, the late agent's.
    const source = await sourceFor(server, accountId, { maxSignalAgeSeconds: 3600 });
    const ticks = path.join(dir(), 'ticks.csv');
    writeFileSync(ticks, 'time,symbol,bid,ask\n2024-03-01T09:30:00Z,EURUSD,1.10000,1.10020\n');
    const running = AgentProcess.start(server.url, paper!.token, dir(), ['--ticks', ticks]);
    agents.push(running);
    await running.connected();

    const bought = await post(source.authKey, 'EURUSD,buy,vol=0.1');
    const refused = await post(source.authKey, 'USDJPY,closesell');
    expect(bought).toMatchObject({ status: 202, body: { status: 'queued', agents: 2 } });
    expect(refused.body.agents).toBe(2);
    await running.waitForHandled(2);
    const record = async (id: string) => (await server.admin('GET', `/api/admin/signals/${id}`)).body;
    const ackedBy = async (id: string) =>
      (await record(id)).deliveries.find((d: { agentId: string }) => d.agentId === paper!.id).status;
    await waitUntil(
      async () => (await ackedBy(bought.body.id)) === 'executed' && (await ackedBy(refused.body.id)) === 'rejected',
      'the acks of the paper agent',
    );
    expect((await server.admin('PATCH', `/api/admin/sources/${source.id}`, { maxSignalAgeSeconds: 2 })).status).toBe(
      200,
    );
    // The second agent comes up after the signals' deadline: both expire (by the sweep, or as it asks).
    const lastDeadline = Math.max(
      ...(await Promise.all(
        [bought, refused].map(async (signal) => Date.parse((await record(signal.body.id)).receivedAt) + 2000),
      )),
    );
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, lastDeadline - Date.now()) + 200));
    const lateAgent = AgentProcess.start(server.url, late!.token, dir(), ['--ticks', ticks]);
    agents.push(lateAgent);
    await lateAgent.connected();
    // One read per signal: both outcomes final (nothing queued or handed out) in the same answer.
    const settled = (outcome: Record<string, number>) => !outcome.queued && !outcome.delivered;
    await waitUntil(
      async () => settled((await record(bought.body.id)).outcome) && settled((await record(refused.body.id)).outcome),
      'the outcomes',
    );

    const buy = await record(bought.body.id);
    // Accepted at the door; what the agents did is its outcome.
    expect(buy.status).toBe('accepted');
    expect(buy.outcome).toEqual({ executed: 1, expired: 1 });
    const byAgent = Object.fromEntries(buy.deliveries.map((d: any) => [d.agentId, d]));
    expect(byAgent[paper!.id]).toMatchObject({
      status: 'executed',
      message: expect.stringContaining('opened buy 0.1 EURUSD'),
    });
    // Handed out at least once (again if the agent asked before its ack was recorded).
    expect(byAgent[paper!.id].attempts).toBeGreaterThanOrEqual(1);
    expect(byAgent[paper!.id].ackedAt).toEqual(expect.any(String));
    expect(byAgent[late!.id]).toMatchObject({ status: 'expired', attempts: 0, deliveredAt: null, message: null });
    expect((await record(refused.body.id)).outcome).toEqual({ rejected: 1, expired: 1 });

    const list = async (query: string) => {
      const res = await server.admin('GET', `/api/admin/signals?sourceId=${source.id}${query}`);
      expect(res.status).toBe(200);
      return res.body.signals.map((s: any) => [s.id, s.outcome]);
    };
    expect(await list('')).toEqual([
      [refused.body.id, { rejected: 1, expired: 1 }],
      [bought.body.id, { executed: 1, expired: 1 }],
    ]);
    expect(await list('&outcome=expired')).toEqual([
      [refused.body.id, { rejected: 1, expired: 1 }],
      [bought.body.id, { executed: 1, expired: 1 }],
    ]);
    expect(await list('&outcome=executed')).toEqual([[bought.body.id, { executed: 1, expired: 1 }]]);
    expect(await list('&outcome=rejected&symbol=usdjpy')).toEqual([[refused.body.id, { rejected: 1, expired: 1 }]]);
    expect(await list('&outcome=failed')).toEqual([]);
    expect(await list('&status=accepted&symbol=EURUSD')).toEqual([[bought.body.id, { executed: 1, expired: 1 }]]);
    const old = await server.admin('GET', `/api/admin/signals?status=queued`);
    expect(old.status).toBe(400);
    expect(old.body).toMatchObject({ param: 'status', detail: 'status must be one of accepted, rejected, duplicate' });
    const badOutcome = await server.admin('GET', `/api/admin/signals?outcome=done`);
    expect(badOutcome.status).toBe(400);
    expect(badOutcome.body).toMatchObject({ param: 'outcome' });

    // Written by the store's expiry watchers just after the commit the admin API already shows.
    const expiriesLogged = () => server.logLines().filter((l) => l.level === 40 && l.agentId === late!.id);
    await waitUntil(() => expiriesLogged().length >= 2, 'the expiry warnings');
    const expiries = expiriesLogged();
    expect(expiries.map((l) => l.signalId).sort()).toEqual([bought.body.id, refused.body.id].sort());
    for (const line of expiries) {
      expect(line.msg).toContain('expired');
      expect(line.lateMs).toBeGreaterThanOrEqual(0);
      expect(line.ageMs).toBeGreaterThanOrEqual(2000);
    }
  });

  it('answers agents: 0 and warns when a signal has no agent to go to', async () => {
    const { accountId } = await accountWithAgents(server, []);
    const source = await sourceFor(server, accountId);
    const lonely = await post(source.authKey, 'EURUSD,buy');
    expect(lonely).toMatchObject({ status: 202, body: { status: 'queued', agents: 0 } });
    expect((await server.admin('GET', `/api/admin/signals/${lonely.body.id}`)).body).toMatchObject({
      status: 'accepted',
      outcome: {},
      deliveries: [],
    });
    await waitUntil(
      () => server.logLines().some((l) => l.signalId === lonely.body.id && l.level === 40),
      'the warning',
    );
    expect(server.logLines().find((l) => l.signalId === lonely.body.id && l.level === 40)).toMatchObject({
      sourceId: source.id,
      msg: expect.stringContaining('no agent'),
    });
  });

  it('answers a repeated alert within the source duplicate window as the first, charging and delivering it once', async () => {
    const {
      accountId,
      agents: [paper],
    } = await accountWithAgents(server, ['paper'], 10);
    const made = await server.admin('POST', '/api/admin/sources', {
      accountId,
      name: 'TV',
      duplicateWindowSeconds: 60,
    });
    expect(made.body.duplicateWindowSeconds).toBe(60);
    const refusedWindow = await server.admin('PATCH', `/api/admin/sources/${made.body.id}`, {
      duplicateWindowSeconds: 3601,
    });
    expect(refusedWindow.status).toBe(422);
    expect(refusedWindow.body).toMatchObject({ param: 'duplicateWindowSeconds' });
    const ticks = path.join(dir(), 'ticks.csv');
    writeFileSync(ticks, 'time,symbol,bid,ask\n2024-03-01T09:30:00Z,EURUSD,1.10000,1.10020\n');
    const running = AgentProcess.start(server.url, paper!.token, dir(), ['--ticks', ticks]);
    agents.push(running);
    await running.connected();

    const [first, second] = await Promise.all([
      post(made.body.authKey, 'EURUSD,buy,vol=0.1'),
      post(made.body.authKey, 'EURUSD,buy,vol=0.1'),
    ]);
    expect(first.status).toBe(202);
    expect(second).toEqual(first);
    await running.waitForHandled(1);
    const log = (await server.admin('GET', `/api/admin/signals?sourceId=${made.body.id}`)).body.signals;
    expect(log.map((s: any) => s.status).sort()).toEqual(['accepted', 'duplicate']);
    const duplicate = log.find((s: any) => s.status === 'duplicate');
    expect(duplicate).toMatchObject({ duplicateOf: first.body.id, httpStatus: 202, quota: null, outcome: null });
    expect((await server.admin('GET', `/api/admin/accounts/${accountId}/usage`)).body.used).toBe(1);
    await waitUntil(
      () => server.logLines().some((l) => l.signalId === duplicate.id && l.duplicateOf === first.body.id),
      'the duplicate line',
    );
    // Executed once: a signal accepted after the repeat is handled next, so a delivery of the
    // repeat, which would come before it in the agent's queue, would have been handled by then.
    const after = await post(made.body.authKey, 'EURUSD,closebuy');
    expect(after.status).toBe(202);
    await running.waitForHandled(2);
    expect(running.handled().map((l) => l.signalId)).toEqual([first.body.id, after.body.id]);
  });
});
