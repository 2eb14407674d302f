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

const plus = (iso: string, seconds: number) => new Date(Date.parse(iso) + seconds * 1000).toISOString();

describe("changing a source's maxSignalAgeSeconds", () => {
  let server: TestServer;
  let agent: TestAgent;
  let accountId: string;

  beforeAll(async () => {
    server = await startTestServer();
    const account = await accountWithAgents(server, ['mt5']);
    agent = account.agents[0]!;
    accountId = account.accountId;
  });
  afterAll(() => server.stop());

  const poll = () => agentRequest(server.url, agent.token, 'GET', '/api/agent/signals');
  const ack = (id: string) =>
    agentRequest(server.url, agent.token, 'POST', `/api/agent/signals/${id}/ack`, { status: 'executed' });
  const patchAge = (sourceId: string, maxSignalAgeSeconds: number) =>
    server.admin('PATCH', `/api/admin/sources/${sourceId}`, { maxSignalAgeSeconds });
  const receivedAt = async (id: string) =>
    (await server.admin('GET', `/api/admin/signals/${id}`)).body.receivedAt as string;

  it('applies to signals not yet acknowledged: lowered, they expire by the new age and are not handed out', async () => {
    const source = await sourceFor(server, accountId, { maxSignalAgeSeconds: 3600 });
    const other = await sourceFor(server, accountId, { maxSignalAgeSeconds: 3600 });
    const acked = await postSignal(server.url, source.authKey, 'EURUSD,buy');
    const handedOut = await postSignal(server.url, source.authKey, 'GBPUSD,sell');
    expect((await poll()).body.signals.map((s: { id: string }) => s.id)).toEqual([acked, handedOut]);
    expect((await ack(acked)).status).toBe(200);
    const queued = await postSignal(server.url, source.authKey, 'USDJPY,buy');
    const elsewhere = await postSignal(server.url, other.authKey, 'AUDUSD,buy');

    // Lowered to a minute: the agent sees the new expiresAt at once.
    expect((await patchAge(source.id, 60)).status).toBe(200);
    const pending = (await poll()).body.signals as Array<{ id: string; expiresAt: string; receivedAt: string }>;
    expect(pending.map((s) => s.id)).toEqual([handedOut, queued, elsewhere]);
    for (const s of pending) expect(s.expiresAt).toBe(plus(s.receivedAt, s.id === elsewhere ? 3600 : 60));

    // Lowered to a second: once it has passed, neither is handed out again, and the log says expired.
    expect((await patchAge(source.id, 1)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await poll()).body.signals.map((s: { id: string }) => s.id)).toEqual([elsewhere]);
    const [h] = await deliveriesOf(server, handedOut);
    expect(h).toMatchObject({ status: 'expired', expiresAt: plus(await receivedAt(handedOut), 1), attempts: 2 });
    const [q] = await deliveriesOf(server, queued);
    expect(q).toMatchObject({ status: 'expired', expiresAt: plus(await receivedAt(queued), 1), attempts: 1 });
    // An acknowledged signal keeps the expiry it was executed under.
    const [a] = await deliveriesOf(server, acked);
    expect(a).toMatchObject({ status: 'executed', expiresAt: plus(await receivedAt(acked), 3600) });

    // Raised again, an expired signal stays expired.
    expect((await patchAge(source.id, 3600)).status).toBe(200);
    expect((await poll()).body.signals.map((s: { id: string }) => s.id)).toEqual([elsewhere]);
    expect((await deliveriesOf(server, queued))[0]).toMatchObject({ status: 'expired' });
    expect((await ack(elsewhere)).status).toBe(200);
  });

  it('raised, gives a signal not yet handed out the longer life', async () => {
    // The raise must land before the first age runs out, which a loaded machine cannot promise
    // for any age: a round where the answer to the PATCH came after that deadline proves nothing
    // and is tried again with a new signal (at most a few times) instead of failing.
    const age = 2;
    for (let round = 1; ; round++) {
      const source = await sourceFor(server, accountId, { maxSignalAgeSeconds: age });
      const id = await postSignal(server.url, source.authKey, 'EURUSD,sell');
      expect((await patchAge(source.id, 3600)).status).toBe(200);
      const firstDeadline = Date.parse(await receivedAt(id)) + age * 1000;
      if (Date.now() >= firstDeadline && round < 5) {
        // Expired or raised, whichever came first: settled here so the next round's poll sees only its own.
        for (const s of (await poll()).body.signals as Array<{ id: string }>) await ack(s.id);
        continue;
      }
      expect(Date.now(), 'the raise answered before the first age ran out, in one of 5 rounds').toBeLessThan(
        firstDeadline,
      );
      await new Promise((resolve) => setTimeout(resolve, firstDeadline - Date.now() + 100));
      const pending = (await poll()).body.signals as Array<{ id: string; expiresAt: string; receivedAt: string }>;
      expect(pending.map((s) => [s.id, s.expiresAt])).toEqual([[id, plus(pending[0]!.receivedAt, 3600)]]);
      expect((await ack(id)).status).toBe(200);
      return;
    }
  });
});
