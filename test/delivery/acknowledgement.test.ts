import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/start-test-server.js';
import {
  accountWithAgents,
  agentRequest,
  deliveriesOf,
  postSignal,
  sourceFor,
  type TestAgent,
} from './support/delivery-setup.js';
import { startLoggedTestServer, type LoggedTestServer } from '../support/logged-test-server.js';

describe('POST /api/agent/signals/{id}/ack', () => {
  let server: TestServer;
  let agent: TestAgent;
  let accountId: string;
  let authKey: string;

  beforeAll(async () => {
    server = await startTestServer();
    const account = await accountWithAgents(server, ['mt5']);
    agent = account.agents[0]!;
    accountId = account.accountId;
    authKey = (await sourceFor(server, accountId)).authKey;
  });
  afterAll(() => server.stop());

  const ack = (id: string, body: unknown) =>
    agentRequest(server.url, agent.token, 'POST', `/api/agent/signals/${id}/ack`, body);
  const take = () => agentRequest(server.url, agent.token, 'GET', '/api/agent/signals');

  it('records executed and rejected outcomes, shown in the admin signal record', async () => {
    const executed = await postSignal(server.url, authKey, 'EURUSD,buy,vol=0.1');
    const rejected = await postSignal(server.url, authKey, 'EURUSD,closesell');
    await take();
    const fill = { ticket: 4711, price: 1.0852 };
    const first = await ack(executed, { status: 'executed', message: 'opened buy 0.1 EURUSD', result: fill });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ signalId: executed, agentId: agent.id, status: 'executed', result: fill });
    const second = await ack(rejected, { status: 'rejected', message: 'no open sell positions on EURUSD' });
    expect(second.status).toBe(200);

    const [e] = await deliveriesOf(server, executed);
    expect(e).toMatchObject({
      agentId: agent.id,
      status: 'executed',
      message: 'opened buy 0.1 EURUSD',
      result: fill,
      attempts: 1,
    });
    expect(e.ackedAt).not.toBeNull();
    const [r] = await deliveriesOf(server, rejected);
    expect(r).toMatchObject({ status: 'rejected', message: 'no open sell positions on EURUSD', timings: null });
  });

  it("keeps the agent's timings with the outcome, absent ones as null", async () => {
    const id = await postSignal(server.url, authKey, 'EURUSD,buy,vol=0.1');
    await take();
    const timings = { decidedAt: '2026-12-02T09:30:00.004Z', sentAt: '2026-12-02T09:30:00.005Z' };
    expect((await ack(id, { status: 'executed', timings })).status).toBe(200);
    expect((await deliveriesOf(server, id))[0].timings).toEqual({ ...timings, venueAckedAt: null, filledAt: null });
  });

  it('answers a repeated acknowledgement again, and refuses a different one with 409 ALREADY_ACKNOWLEDGED', async () => {
    const id = await postSignal(server.url, authKey, 'GBPUSD,buy');
    await take();
    expect((await ack(id, { status: 'failed', message: 'broker offline' })).status).toBe(200);
    const repeat = await ack(id, { status: 'failed', message: 'broker offline' });
    expect(repeat.status).toBe(200);
    expect(repeat.body.status).toBe('failed');
    const conflict = await ack(id, { status: 'executed' });
    expect(conflict.status).toBe(409);
    expect(conflict.contentType).toContain('application/problem+json');
    expect(conflict.body.code).toBe('ALREADY_ACKNOWLEDGED');
    const [delivery] = await deliveriesOf(server, id);
    expect(delivery.status).toBe('failed');
  });

  it('answers 404 for a signal that was never queued for the agent', async () => {
    const res = await ack('sig_nonexistent', { status: 'executed' });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('NOT_FOUND');
  });

  it('refuses with 409 SIGNAL_NOT_DELIVERED an acknowledgement of a signal not handed out yet, and hands it out as before', async () => {
    const id = await postSignal(server.url, authKey, 'AUDUSD,buy,vol=0.1');
    const early = await ack(id, { status: 'executed', message: 'opened' });
    expect(early.status).toBe(409);
    expect(early.contentType).toContain('application/problem+json');
    expect(early.body).toMatchObject({ code: 'SIGNAL_NOT_DELIVERED', param: 'id' });
    expect(early.body.detail).toContain(id);
    expect((await deliveriesOf(server, id))[0]).toMatchObject({ status: 'queued', ackedAt: null, message: null });

    const res = await take();
    expect(res.body.signals.map((s: { id: string }) => s.id)).toEqual([id]);
    expect((await ack(id, { status: 'executed' })).status).toBe(200);
  });

  it.each([
    [{ status: 'done' }, 'status'],
    [{}, 'status'],
    [{ status: 'executed', message: 42 }, 'message'],
    [{ status: 'executed', outcome: 'ok' }, 'outcome'],
    [{ status: 'executed', timings: 'fast' }, 'timings'],
    [{ status: 'executed', timings: { sentAt: 'yesterday' } }, 'timings'],
    [{ status: 'executed', timings: { sentAt: 1764667800000 } }, 'timings'],
    [{ status: 'executed', timings: { placedAt: '2026-12-02T09:30:00.000Z' } }, 'timings'],
  ])('refuses the malformed acknowledgement %j with 422 naming %s', async (body, param) => {
    const id = await postSignal(server.url, authKey, 'USDCHF,sell');
    await take();
    const res = await ack(id, body);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'INVALID_FIELD', param });
    expect((await deliveriesOf(server, id))[0].status).toBe('delivered');
    await ack(id, { status: 'executed' });
  });

  it('refuses a body that is not a JSON object with 400', async () => {
    const res = await ack('sig_any', ['executed']);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_REQUEST');
  });

  it('marks a signal older than maxSignalAgeSeconds expired, never hands it out, and refuses its ack with 409 SIGNAL_EXPIRED', async () => {
    const shortLived = await sourceFor(server, accountId, { maxSignalAgeSeconds: 1 });
    const id = await postSignal(server.url, shortLived.authKey, 'EURUSD,buy');
    // The agent is offline longer than the signal may live.
    await new Promise((resolve) => setTimeout(resolve, 1300));
    const fresh = await postSignal(server.url, authKey, 'EURUSD,sell');
    const res = await take();
    expect(res.body.signals.map((s: { id: string }) => s.id)).toEqual([fresh]);
    const [delivery] = await deliveriesOf(server, id);
    expect(delivery).toMatchObject({ status: 'expired', deliveredAt: null, attempts: 0 });
    const late = await ack(id, { status: 'executed' });
    expect(late.status).toBe(409);
    expect(late.body.code).toBe('SIGNAL_EXPIRED');
    await ack(fresh, { status: 'executed' });
  });
});

describe('an acknowledgement of a signal handed out and expired afterwards', () => {
  let server: LoggedTestServer;
  let agent: TestAgent;
  let accountId: string;
  let longLived: string;

  beforeAll(async () => {
    server = await startLoggedTestServer();
    const account = await accountWithAgents(server, ['mt5']);
    agent = account.agents[0]!;
    accountId = account.accountId;
    longLived = (await sourceFor(server, account.accountId)).authKey;
  });
  afterAll(() => server.stop());

  const ack = (id: string, body: unknown) =>
    agentRequest(server.url, agent.token, 'POST', `/api/agent/signals/${id}/ack`, body);
  const take = () => agentRequest(server.url, agent.token, 'GET', '/api/agent/signals');
  const lateAckWarnings = (signalId: string) =>
    server
      .logLines()
      .filter(
        (line) => line.level === 40 && line.signalId === signalId && String(line.msg).startsWith('signal acknowledged'),
      );

  it.each([
    ['after a poll marked it expired', true],
    ['before any poll marked it expired', false],
  ])('is taken, and the record and the server log say it came after expiry (%s)', async (_, pollFirst) => {
    // Handed out first, then its source's age lowered to a second (which applies to signals not
    // yet acknowledged), and the second let pass: a 1 s age from the start could run out before
    // the take on a loaded machine.
    const source = await sourceFor(server, accountId);
    const id = await postSignal(server.url, source.authKey, 'EURUSD,buy');
    expect((await take()).body.signals.map((s: { id: string }) => s.id)).toEqual([id]);
    expect((await server.admin('PATCH', `/api/admin/sources/${source.id}`, { maxSignalAgeSeconds: 1 })).status).toBe(
      200,
    );
    const [{ expiresAt }] = await deliveriesOf(server, id);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(expiresAt) - Date.now()) + 300));
    if (pollFirst) {
      expect((await take()).body.signals).toEqual([]);
      expect((await deliveriesOf(server, id))[0]).toMatchObject({ status: 'expired', ackedAfterExpiry: false });
    }
    const res = await ack(id, { status: 'executed', message: 'filled late' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'executed', ackedAfterExpiry: true });
    const [delivery] = await deliveriesOf(server, id);
    expect(delivery).toMatchObject({ status: 'executed', message: 'filled late', ackedAfterExpiry: true });
    expect(Date.parse(delivery.ackedAt)).toBeGreaterThanOrEqual(Date.parse(delivery.expiresAt));

    const warnings = lateAckWarnings(id);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      signalId: id,
      agentId: agent.id,
      status: 'executed',
      expiresAt: delivery.expiresAt,
    });
    // Repeating the acknowledgement changes nothing and warns no more.
    expect((await ack(id, { status: 'executed' })).status).toBe(200);
    expect(lateAckWarnings(id)).toHaveLength(1);
  });

  it('is not flagged for an acknowledgement in time', async () => {
    const id = await postSignal(server.url, longLived, 'GBPUSD,sell');
    await take();
    const res = await ack(id, { status: 'failed', message: 'broker offline' });
    expect(res.status).toBe(200);
    expect(res.body.ackedAfterExpiry).toBe(false);
    expect((await deliveriesOf(server, id))[0]).toMatchObject({ status: 'failed', ackedAfterExpiry: false });
    expect(lateAckWarnings(id)).toEqual([]);
  });
});
