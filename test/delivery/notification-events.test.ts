import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { NotificationReceivers } from '../fakes/notification-receivers.js';
import { startTestServer, type TestServer } from '../support/start-test-server.js';

/** What the agent side tells the notifications: acknowledgements and the agent's published state. */
describe('notifications of what agents report', () => {
  let receivers: NotificationReceivers;
  let server: TestServer;
  let token: string;
  let inbound: string;

  beforeAll(async () => {
    receivers = await new NotificationReceivers().start();
    server = await startTestServer();
    const accountId = (await server.admin('POST', '/api/admin/accounts', { name: 'Desk', monthlySignalQuota: 100 }))
      .body.id;
    token = (await server.admin('POST', `/api/admin/accounts/${accountId}/agents`, { name: 'paper' })).body.token;
    inbound = (await server.admin('POST', '/api/admin/sources', { accountId, name: 'tv' })).body.inboundUrl.replace(
      'http://signals.example.test',
      server.url,
    );
    await server.admin('POST', `/api/admin/accounts/${accountId}/channels`, {
      kind: 'webhook',
      name: 'pager',
      url: `${receivers.url}/hook`,
      events: ['delivery_rejected', 'venue_logon_refused', 'book_mismatch', 'position_unprotected', 'risk_rule_hit'],
    });
  });

  afterAll(async () => {
    await server?.stop();
    await receivers?.close();
  });

  const agent = (method: string, path: string, body?: unknown) =>
    fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });

  it('tells a rejected delivery, with the agent’s reason', async () => {
    const sent = await fetch(inbound, { method: 'POST', body: 'EURUSD,buy,vol=0.1' });
    const { id } = (await sent.json()) as { id: string };
    await (await agent('GET', '/api/agent/signals')).body?.cancel();
    const ack = await agent('POST', `/api/agent/signals/${id}/ack`, { status: 'rejected', message: 'market closed' });
    expect(ack.status).toBe(200);
    await vi.waitFor(() => expect(receivers.of('webhook')).toHaveLength(1), { timeout: 5000, interval: 50 });
    expect(receivers.of('webhook')[0]!.body).toMatchObject({ event: 'delivery_rejected' });
    expect(receivers.of('webhook')[0]!.body.details[0]).toMatch(/message: market closed/);
    expect(receivers.of('webhook')[0]!.body.link).toBe(`http://signals.example.test/#signals/${id}`);
  });

  it('tells a logon refused, a position not managed and one without a stop once each, as they begin', async () => {
    const state = {
      balance: 1000,
      equity: 1000,
      currency: 'USD',
      connected: false,
      disconnectedBecause: 'logon rejected: invalid password',
      positions: [{ id: '4', symbol: 'EURUSD', unprotected: { reason: 'stop refused', attempts: 3 } }],
      orders: [],
      notManaged: [{ kind: 'position', id: '77', symbol: 'GBPUSD' }],
    };
    expect((await agent('PUT', '/api/agent/state', state)).status).toBe(200);
    expect((await agent('PUT', '/api/agent/state', state)).status).toBe(200);
    await vi.waitFor(() => expect(receivers.of('webhook')).toHaveLength(4), { timeout: 5000, interval: 50 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receivers.of('webhook').map((r) => r.body.event)).toEqual([
      'delivery_rejected',
      'venue_logon_refused',
      'book_mismatch',
      'position_unprotected',
    ]);
  });

  it('tells a signal a risk rule stopped as the rule hit, not as a plain rejection', async () => {
    const sent = await fetch(inbound, { method: 'POST', body: 'EURUSD,buy,vol=5' });
    const { id } = (await sent.json()) as { id: string };
    await (await agent('GET', '/api/agent/signals')).body?.cancel();
    const ack = await agent('POST', `/api/agent/signals/${id}/ack`, {
      status: 'rejected',
      message: 'maxLotsPerOrder: the order of 5 lots is over the limit of 2',
      result: { code: 'RISK_LIMIT', rule: 'maxLotsPerOrder', limit: 2, value: 5 },
    });
    expect(ack.status).toBe(200);
    await vi.waitFor(() => expect(receivers.of('webhook')).toHaveLength(5), { timeout: 5000, interval: 50 });
    const told = receivers.of('webhook')[4]!.body;
    expect(told).toMatchObject({ event: 'risk_rule_hit', link: `http://signals.example.test/#signals/${id}` });
    expect(told.details[0]).toMatch(/rule: maxLotsPerOrder; message: maxLotsPerOrder: the order of 5 lots/);
  });
});
