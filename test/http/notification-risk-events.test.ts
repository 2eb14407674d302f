import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { tellRiskHalted, tellRiskReleased } from '../../src/notifications/risk-events.js';
import { Notifier } from '../../src/notifications/notifier.js';
import { NotificationReceivers } from '../fakes/notification-receivers.js';
import { startTestServer, type TestServer } from '../support/start-test-server.js';

/**
 * The hook issue 47's halts call: a halt and its release, told through the server's outbox to
 * the account's channels (chosen by default), worded with what was halted, why, by whom.
 */
describe('risk halt notifications (the hook for halts)', () => {
  let receivers: NotificationReceivers;
  let server: TestServer;
  let accountId: string;
  let notifier: Notifier;

  beforeAll(async () => {
    receivers = await new NotificationReceivers().start();
    server = await startTestServer();
    accountId = (await server.admin('POST', '/api/admin/accounts', { name: 'Desk', monthlySignalQuota: 10 })).body.id;
    const channel = await server.admin('POST', `/api/admin/accounts/${accountId}/channels`, {
      kind: 'webhook',
      name: 'pager',
      url: `${receivers.url}/hook`,
    });
    expect(channel.body.events).toEqual(expect.arrayContaining(['risk_halted', 'risk_released']));
    // A notifier of its own on the server's store: what it queues, the server's sender sends.
    notifier = new Notifier(server.store, pino({ level: 'silent' }), () => undefined);
  });

  afterAll(async () => {
    await notifier?.close();
    await server?.stop();
    await receivers?.close();
  });

  it('tells a halt by the daily-loss rule, then its release by hand', async () => {
    tellRiskHalted(notifier, {
      accountId,
      target: { type: 'account', id: accountId, name: 'Desk' },
      reason: 'daily loss limit reached',
      by: 'agent paper (agt_1)',
      rule: { name: 'maxDailyLoss', limit: '5 %', value: '5.2 %' },
      flatten: true,
      at: '2026-12-02T14:03:07.000Z',
    });
    await notifier.flush();
    await vi.waitFor(() => expect(receivers.of('webhook')).toHaveLength(1), { timeout: 10_000, interval: 50 });
    expect(receivers.of('webhook')[0]!.body).toMatchObject({
      event: 'risk_halted',
      title: `Trading halted: account “Desk” (${accountId})`,
      details: [
        '14:03:07 UTC — reason: daily loss limit reached; by: agent paper (agt_1); rule: maxDailyLoss; limit: 5 %; reached: 5.2 %; flatten: positions closed, orders cancelled',
      ],
      whatToDo: expect.stringMatching(/^Signals are still received and logged as halted, and never executed later/),
      link: `http://signals.example.test/#accounts/${accountId}`,
    });

    tellRiskReleased(notifier, {
      accountId,
      target: { type: 'source', id: 'src_1', name: 'tv' },
      by: 'dashboard session',
      haltedAt: '2026-12-02T14:03:07.000Z',
      at: '2026-12-02T15:00:00.000Z',
    });
    await notifier.flush();
    await vi.waitFor(() => expect(receivers.of('webhook')).toHaveLength(2), { timeout: 10_000, interval: 50 });
    expect(receivers.of('webhook')[1]!.body).toMatchObject({
      event: 'risk_released',
      title: 'Halt released: source “tv” (src_1)',
      details: ['15:00:00 UTC — by: dashboard session; haltedAt: 2026-12-02T14:03:07.000Z'],
      link: 'http://signals.example.test/#sources/src_1',
    });
  });

  it('tells a halt made through the admin API, and its release, once each', async () => {
    const before = receivers.of('webhook').length;
    const halted = await server.admin('POST', `/api/admin/accounts/${accountId}/halt`, {
      reason: 'strategy misfiring',
    });
    expect(halted.status).toBe(201);
    // Halting what is halted already changes nothing, and tells nothing again.
    expect((await server.admin('POST', `/api/admin/accounts/${accountId}/halt`, { reason: 'again' })).status).toBe(200);
    await vi.waitFor(() => expect(receivers.of('webhook').length).toBe(before + 1), { timeout: 15_000, interval: 50 });
    expect(receivers.of('webhook')[before]!.body).toMatchObject({
      event: 'risk_halted',
      details: [expect.stringContaining('reason: strategy misfiring; by: admin token; flatten: no')],
    });
    expect((await server.admin('POST', `/api/admin/accounts/${accountId}/release`)).status).toBe(200);
    await vi.waitFor(() => expect(receivers.of('webhook').length).toBe(before + 2), { timeout: 15_000, interval: 50 });
    expect(receivers.of('webhook')[before + 1]!.body).toMatchObject({ event: 'risk_released' });
    expect(receivers.of('webhook').filter((m) => (m.body as { event: string }).event === 'risk_halted')).toHaveLength(
      2,
    );
  });
});
