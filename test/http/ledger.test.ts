import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, seedSource } from '../support/seed-source.js';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/start-test-server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

async function desk() {
  const src = await seedSource(server);
  const agent = await server.admin('POST', `/api/admin/accounts/${src.accountId}/agents`, { name: 'venue' });
  const token = agent.body.token as string;
  const report = (body: unknown) =>
    post(`${server.url}/api/agent/fills`, JSON.stringify(body), {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
    });
  return { ...src, agentId: agent.body.id as string, report };
}

const fill = (venueFillId: string, over: Record<string, unknown>) => ({
  venueFillId,
  orderId: `o-${venueFillId}`,
  symbol: 'BTCUSDT',
  side: 'buy',
  lots: 1,
  price: 100,
  fee: 0,
  feeCurrency: 'USDT',
  at: '2026-12-01T10:00:00.000Z',
  signalId: null,
  ...over,
});

describe('the ledger over HTTP', () => {
  it('records reported fills once, and answers trades, their CSV and the statistics from them', async () => {
    const d = await desk();
    const signal = await post(server.url + d.inboundPath, 'BTCUSDT,buy,vol=0.5,comment="trend"');
    expect(signal.status).toBe(202);
    // Long 0.5 at 100 (fee 0.05), sold 0.2 at 110 (fee 0.022) and 0.3 at 95 (fee 0.0285).
    const fills = [
      fill('f1', { lots: 0.5, price: 100, fee: 0.05, signalId: signal.body.id }),
      fill('f2', { side: 'sell', lots: 0.2, price: 110, fee: 0.022, at: '2026-12-01T11:00:00.000Z' }),
    ];
    expect(await d.report({ fills })).toMatchObject({ status: 200, body: { recorded: 2, known: 0 } });
    // Sent again with one more: the first two are known, not doubled.
    const third = fill('f3', { side: 'sell', lots: 0.3, price: 95, fee: 0.0285, at: '2026-12-02T09:00:00.000Z' });
    expect(await d.report({ fills: [...fills, third], funding: [] })).toMatchObject({
      status: 200,
      body: { recorded: 1, known: 2 },
    });

    const trades = await server.admin('GET', `/api/admin/ledger/trades?accountId=${d.accountId}`);
    expect(trades.status).toBe(200);
    // Trade 1: 0.2 × (110 − 100) = 2; fees 0.05 × 0.2/0.5 + 0.022 = 0.042; net 1.958.
    // Trade 2: 0.3 × (95 − 100) = −1.5; fees 0.03 + 0.0285 = 0.0585; net −1.5585.
    expect(
      trades.body.trades.map((t: any) => [t.lots, t.entryPrice, t.exitPrice, t.fees, t.realizedProfit, t.strategy]),
    ).toEqual([
      [0.2, 100, 110, 0.042, 1.958, 'trend'],
      [0.3, 100, 95, 0.0585, -1.5585, 'trend'],
    ]);
    expect(trades.body.trades[0]).toMatchObject({
      sourceId: d.sourceId,
      openingSignalId: signal.body.id,
      agentId: d.agentId,
      receivedAt: expect.any(String),
    });

    // The period is by exit: only the trade closed on 2026-12-02.
    const day = await server.admin('GET', `/api/admin/ledger/trades?accountId=${d.accountId}&from=2026-12-02`);
    expect(day.body.trades.map((t: any) => t.realizedProfit)).toEqual([-1.5585]);
    const other = await server.admin('GET', `/api/admin/ledger/trades?accountId=${d.accountId}&strategy=meanrev`);
    expect(other.body.trades).toEqual([]);

    const csv = await fetch(`${server.url}/api/admin/ledger/trades.csv?accountId=${d.accountId}`, {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const lines = (await csv.text()).trimEnd().split('\r\n');
    expect(lines[0]).toMatch(
      /^id,agentId,accountId,sourceId,strategy,symbol,side,lots,entryAt,entryPrice,exitAt,exitPrice,fees/,
    );
    expect(lines).toHaveLength(3);
    expect(lines[2]).toContain(
      ',BTCUSDT,long,0.3,2026-12-01T10:00:00.000Z,100,2026-12-02T09:00:00.000Z,95,0.0585,0,-1.5585,',
    );

    const stats = await server.admin('GET', `/api/admin/ledger/statistics?accountId=${d.accountId}`);
    expect(stats.status).toBe(200);
    // Net 1.958 − 1.5585 = 0.3995; one win, one loss; profit factor 1.958 / 1.5585.
    expect(stats.body.statistics).toMatchObject({ trades: 2, wins: 1, losses: 1, netProfit: 0.3995 });
    expect(stats.body.statistics.profitFactor).toBeCloseTo(1.958 / 1.5585, 8);
    expect(stats.body.bySource.map((g: any) => g.key)).toEqual([d.sourceId]);
    expect(stats.body.latencyBySource[0]).toMatchObject({ key: d.sourceId, trades: 2 });
  });

  it('a bust reported before its fill applies once the fill comes; sent again it is known; a bad one is refused', async () => {
    const d = await desk();
    const bust = { venueFillId: 'x1', lots: 0.2, at: '2026-12-01T12:00:00.000Z' };
    expect(await d.report({ fills: [], busts: [bust] })).toMatchObject({
      status: 200,
      body: { recorded: 1, known: 0 },
    });
    const exit = fill('x1', { side: 'sell', lots: 0.2, price: 110, at: '2026-12-01T11:00:00.000Z', effect: 'close' });
    expect(await d.report({ fills: [fill('e1', { lots: 0.5 }), exit], busts: [bust] })).toMatchObject({
      status: 200,
      body: { recorded: 2, known: 1 },
    });
    // The exit never was: the long of 0.5 is open whole.
    const trades = await server.admin('GET', `/api/admin/ledger/trades?accountId=${d.accountId}`);
    expect(trades.body.trades.map((t: any) => [t.lots, t.exitAt, t.realizedProfit])).toEqual([[0.5, null, null]]);
    const bad = await d.report({ fills: [], busts: [{ venueFillId: 'x2', lots: 0, at: 'noon' }] });
    expect(bad.status).toBe(422);
    expect(bad.body.errors ?? [bad.body]).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: 'INVALID_FIELD', param: 'busts[0].lots' }),
        expect.objectContaining({ code: 'INVALID_FIELD', param: 'busts[0].at' }),
      ]),
    );
  });

  it('refuses a bad report naming the entry and field, and records none of it', async () => {
    const d = await desk();
    const bad = await d.report({ fills: [fill('ok', {}), fill('bad', { lots: -1, sidee: 'buy' })] });
    expect(bad.status).toBe(422);
    expect(bad.body.errors ?? [bad.body]).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: 'INVALID_FIELD', param: 'fills[1].lots' }),
        expect.objectContaining({ code: 'INVALID_FIELD', param: 'fills[1].sidee' }),
      ]),
    );
    const trades = await server.admin('GET', `/api/admin/ledger/trades?accountId=${d.accountId}`);
    expect(trades.body.trades).toEqual([]);
    const noToken = await post(`${server.url}/api/agent/fills`, '{"fills":[]}', { 'content-type': 'application/json' });
    expect(noToken.status).toBe(401);
  });

  it('refuses a ledger query without an account, with an unknown one, or with a time that is not one', async () => {
    const missing = await server.admin('GET', '/api/admin/ledger/trades');
    expect(missing).toMatchObject({ status: 400, body: { code: 'INVALID_REQUEST', param: 'accountId' } });
    const unknown = await server.admin('GET', '/api/admin/ledger/statistics?accountId=acc_nope');
    expect(unknown).toMatchObject({ status: 404, body: { param: 'accountId' } });
    const d = await desk();
    const time = await server.admin('GET', `/api/admin/ledger/trades?accountId=${d.accountId}&from=yesterday`);
    expect(time).toMatchObject({
      status: 400,
      body: { param: 'from', detail: expect.stringContaining('2026-12-01T00:00:00Z') },
    });
    const typo = await server.admin('GET', `/api/admin/ledger/trades?accountId=${d.accountId}&symbl=BTCUSDT`);
    expect(typo).toMatchObject({ status: 400, body: { param: 'symbl' } });
  });
});
