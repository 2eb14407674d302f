import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRequest } from '../support/admin-client.js';
import { freshPostgresSchema } from '../support/postgres.js';
import { spawnServer, type ServerProcess } from '../support/spawn-server.js';
import { TEST_ADMIN_TOKEN } from '../support/test-tokens.js';
import { BINANCE_KEYS } from '../support/ccxt-agent-bed.js';
import { waitUntil } from '../delivery/support/delivery-setup.js';
import { BinanceUsdmExchange } from '../fakes/binance-usdm-exchange.js';
import { AgentProcess } from './support/agent-process.js';

/**
 * The risk rules, halts and flattens end to end: `signalgate serve` from dist/, and one account
 * with two real agent processes, `--venue ccxt --exchange binanceusdm` on the Binance USDⓈ-M test
 * exchange and `--paper`. The rules set through the admin API reach the agent with the signal,
 * a halt that flattens leaves both venues flat, and the daily loss the exchange reports halts the
 * account through the agent's own report. One server and one pair of agents for every case, in order.
 */
describe('risk rules, halts and flattens through the real server', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  let server: ServerProcess;
  let exchange: BinanceUsdmExchange;
  let accountId: string;
  let binance: { id: string; agent: AgentProcess };
  let paper: { id: string; agent: AgentProcess };
  /** Signals to the Binance agent only, and to the paper agent only. */
  let toBinance: { id: string; authKey: string };
  let toPaper: { id: string; authKey: string };
  /** A second source to the Binance agent, whose rules go away in the first case. */
  let swing: { id: string; authKey: string };

  const admin = async (method: string, urlPath: string, body?: unknown) =>
    adminRequest(server.url, TEST_ADMIN_TOKEN, method, urlPath, body);
  const made = async (method: string, urlPath: string, body?: unknown) => {
    const answer = await admin(method, urlPath, body);
    if (![200, 201, 204].includes(answer.status))
      throw new Error(`${method} ${urlPath}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  /** Posts a text signal; answers the inbound answer (202 with the signal's id and status). */
  const post = async (authKey: string, text: string): Promise<{ id: string; status: string }> => {
    const res = await fetch(`${server.url}/api/inbound/${authKey}`, { method: 'POST', body: text });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(202);
    return body;
  };
  const deliveries = async (signalId: string): Promise<any[]> =>
    (await made('GET', `/api/admin/signals/${signalId}`)).deliveries;
  /** The signal's deliveries once none is queued or delivered any more. */
  const settled = async (signalId: string, timeoutMs = 30_000): Promise<any[]> => {
    let found: any[] = [];
    await waitUntil(
      async () => (found = await deliveries(signalId)).every((d) => !['queued', 'delivered'].includes(d.status)),
      `the outcome of ${signalId}`,
      timeoutMs,
    );
    return found;
  };
  /** Posts a signal to one agent and answers its single delivery once settled. */
  const outcome = async (authKey: string, text: string) => {
    const { id } = await post(authKey, text);
    const [only, ...more] = await settled(id);
    expect(more).toEqual([]);
    return { id, ...only };
  };
  const venue = () =>
    exchange.state() as {
      positions: { symbol: string; amount: number }[];
      openOrders: unknown[];
      openAlgoOrders: unknown[];
    };

  beforeAll(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-risk-server-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const env: Record<string, string> = {
      SIGNALGATE_DATA_DIR: path.join(dir, 'server'),
      SIGNALGATE_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    };
    if (process.env.SIGNALGATE_TEST_STORE === 'postgres') {
      const pg = await freshPostgresSchema('risk_server');
      cleanups.push(() => pg.drop());
      env.SIGNALGATE_DATABASE_URL = pg.urlWithSchema;
    }
    server = await spawnServer(env);
    cleanups.push(async () => {
      server.child.kill('SIGKILL');
      await server.exited;
    });
    exchange = await BinanceUsdmExchange.start({
      apiKey: BINANCE_KEYS.SIGNALGATE_CCXT_API_KEY,
      secret: BINANCE_KEYS.SIGNALGATE_CCXT_SECRET,
    });
    cleanups.push(() => exchange.stop());

    accountId = (await made('POST', '/api/admin/accounts', { name: 'Desk', monthlySignalQuota: 1000 })).id;
    const agentOf = async (name: string) => made('POST', `/api/admin/accounts/${accountId}/agents`, { name });
    const [b, p] = [await agentOf('binance'), await agentOf('paper')];
    const sourceTo = async (agentId: string, name: string) => {
      const source = await made('POST', '/api/admin/sources', { accountId, name, agentIds: [agentId] });
      return { id: source.id as string, authKey: source.authKey as string };
    };
    toBinance = await sourceTo(b.id, 'crypto alerts');
    toPaper = await sourceTo(p.id, 'fx alerts');
    swing = await sourceTo(b.id, 'swing alerts');

    // The default transport (the WebSocket), as an operator runs them.
    const binanceAgent = AgentProcess.startVenue(
      server.url,
      b.token,
      path.join(dir, 'binance'),
      ['--venue', 'ccxt', '--exchange', 'binanceusdm', '--proxy-url', exchange.url],
      BINANCE_KEYS,
    );
    const paperAgent = AgentProcess.start(server.url, p.token, path.join(dir, 'paper'), ['--seed', '7']);
    cleanups.push(
      () => binanceAgent.kill(),
      () => paperAgent.kill(),
    );
    binance = { id: b.id, agent: binanceAgent };
    paper = { id: p.id, agent: paperAgent };
    await binanceAgent.waitForLog((l) => l.msg === 'venue ready', 'the venue ready', 90_000);
    await paperAgent.waitForLog((l) => l.msg === 'paper account ready', 'the paper account ready', 90_000);
    await Promise.all([binanceAgent.connected(), paperAgent.connected()]);
  }, 120_000);
  afterAll(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('the account’s rules narrowed by the source’s reach the agent with the signal; a change holds from the next signal', async () => {
    await made('PUT', `/api/admin/accounts/${accountId}/risk-rules`, { maxLotsPerOrder: 0.05 });
    const narrowed = await made('PUT', `/api/admin/sources/${toBinance.id}/risk-rules`, { maxLotsPerOrder: 0.02 });
    expect(narrowed.effective).toMatchObject({ maxLotsPerOrder: 0.02 });
    const orders = exchange.requests('POST', '/fapi/v1/order').length;

    const above = await outcome(toBinance.authKey, 'BTCUSDT,buy,vol=0.03');
    expect(above).toMatchObject({
      agentId: binance.id,
      status: 'rejected',
      result: { code: 'RISK_LIMIT', rule: 'maxLotsPerOrder', limit: 0.02, value: 0.03 },
    });
    expect(above.message).toMatch(/^risk rule maxLotsPerOrder \(limit 0\.02, value 0\.03\)/);
    // Nothing of it left for the exchange.
    expect(exchange.requests('POST', '/fapi/v1/order').length).toBe(orders);
    const at = await outcome(toBinance.authKey, 'BTCUSDT,buy,vol=0.02');
    expect(at.status, at.message).toBe('executed');
    expect(venue().positions).toEqual([expect.objectContaining({ symbol: 'BTCUSDT', amount: 0.02 })]);

    // The source loosened to the account's limit: the next signal carries it.
    await made('PUT', `/api/admin/sources/${toBinance.id}/risk-rules`, { maxLotsPerOrder: 0.03 });
    const loosened = await outcome(toBinance.authKey, 'BTCUSDT,buy,vol=0.03');
    expect(loosened.status, loosened.message).toBe('executed');
    // The account tightened below it: the account's holds.
    await made('PUT', `/api/admin/accounts/${accountId}/risk-rules`, { maxLotsPerOrder: 0.01 });
    expect(await outcome(toBinance.authKey, 'BTCUSDT,buy,vol=0.02')).toMatchObject({
      status: 'rejected',
      result: { rule: 'maxLotsPerOrder', limit: 0.01, value: 0.02 },
    });
    expect(venue().positions).toEqual([expect.objectContaining({ symbol: 'BTCUSDT', amount: 0.05 })]);
    // A daily loss limit of 300 reaches the agent with a signal of the second source, then the
    // rules are removed: its next signal carries none, and the agent stops measuring that limit
    // (the last case shows it: a stale, looser 300 would keep the account from halting at 150).
    await made('PUT', `/api/admin/accounts/${accountId}/risk-rules`, { maxDailyLoss: { amount: 300 } });
    expect((await outcome(swing.authKey, 'ETHUSDT,buy,vol=0.01')).status).toBe('executed');
    await made('DELETE', `/api/admin/sources/${toBinance.id}/risk-rules`);
    await made('DELETE', `/api/admin/accounts/${accountId}/risk-rules`);
    expect((await outcome(swing.authKey, 'ETHUSDT,buy,vol=0.01')).status).toBe('executed');
  });

  it('a halt that flattens leaves both agents’ venues flat; what comes while halted is never delivered', async () => {
    // The Binance agent holds BTCUSDT from the first case, and a pending ETHUSDT entry; the paper agent two positions and a pending entry.
    const pendingEth = await outcome(toBinance.authKey, 'ETHUSDT,buylimit,vol=0.1,entry_price=2500');
    expect(pendingEth.status, pendingEth.message).toBe('executed');
    for (const text of ['EURUSD,buy,vol=0.1', 'GBPUSD,buy,vol=0.2', 'GBPUSD,buylimit,vol=0.1,entry_pips=200']) {
      const done = await outcome(toPaper.authKey, text);
      expect(done.status, `${text}: ${done.message}`).toBe('executed');
    }
    expect(venue().positions).not.toEqual([]);
    expect(venue().openOrders).not.toEqual([]);

    const halt = await admin('POST', `/api/admin/accounts/${accountId}/halt`, { reason: 'kill switch', flatten: true });
    expect(halt.status, JSON.stringify(halt.body)).toBe(201);
    expect(halt.body.flattens).toEqual([
      { signalId: expect.any(String), agentIds: expect.arrayContaining([binance.id, paper.id]) },
    ]);
    const flattenId = halt.body.flattens[0].signalId as string;
    // Received while halted: answered, logged `halted`, to either agent.
    const whileHalted = await post(toBinance.authKey, 'BTCUSDT,buy,vol=0.01,comment=while-halted');
    expect(whileHalted.status).toBe('halted');
    const paperWhileHalted = await post(toPaper.authKey, 'EURUSD,buy,vol=0.1,comment=while-halted');
    expect(paperWhileHalted.status).toBe('halted');

    const flattened = await settled(flattenId, 60_000);
    expect(flattened).toHaveLength(2);
    for (const delivery of flattened) {
      expect(delivery, JSON.stringify(delivery)).toMatchObject({
        status: 'executed',
        message: expect.stringContaining('flattened (kill switch)'),
        result: { remaining: { positions: [], orders: [] } },
      });
    }
    const flatOf = (agentId: string) => flattened.find((d) => d.agentId === agentId)!;
    expect(
      flatOf(paper.id)
        .result.items.map((i: { symbol: string }) => i.symbol)
        .sort(),
    ).toEqual(['EURUSD', 'GBPUSD']);
    expect(venue()).toMatchObject({ positions: [], openOrders: [], openAlgoOrders: [] });
    expect((await made('GET', `/api/admin/signals/${flattenId}`)).outcome).toEqual({ executed: 2 });

    // Released by hand: what came while halted stays halted, and only what comes after is delivered.
    await made('POST', `/api/admin/accounts/${accountId}/release`);
    const after = await outcome(toPaper.authKey, 'EURUSD,buy,vol=0.1,comment=after-release');
    expect(after.status, after.message).toBe('executed');
    const closed = await outcome(toPaper.authKey, 'EURUSD,closeall');
    expect(closed.status, closed.message).toBe('executed');
    for (const { id } of [whileHalted, paperWhileHalted]) {
      expect((await deliveries(id)).map((d) => d.status)).toEqual(['halted']);
    }
    for (const agent of [binance.agent, paper.agent]) {
      const seen = agent.handled().map((l) => l.signalId);
      expect(seen).not.toContain(whileHalted.id);
      expect(seen).not.toContain(paperWhileHalted.id);
    }
    expect(paper.agent.handled().map((l) => l.signalId)).toContain(after.id);
  });

  it('the daily loss the exchange reports halts the account through the agent’s report', async () => {
    await made('PUT', `/api/admin/accounts/${accountId}/risk-rules`, { maxDailyLoss: { amount: 150 } });
    const entry = await outcome(toBinance.authKey, 'BTCUSDT,buy,vol=0.1');
    expect(entry.status, entry.message).toBe('executed');
    // 0.1 BTC from 50,000 to 48,000: about 200 lost, unrealized, against a limit of 150.
    const res = await fetch(`${exchange.url}_control/price?symbol=BTCUSDT&price=48000`, { method: 'POST' });
    expect(res.status).toBe(200);
    let halts: any[] = [];
    await waitUntil(
      async () => (halts = (await made('GET', `/api/admin/halts?accountId=${accountId}`)).halts).length > 0,
      'the agent’s halt',
      40_000,
    );
    expect(halts).toEqual([
      expect.objectContaining({
        scope: 'account',
        targetId: accountId,
        haltedBy: `agent ${binance.id}`,
        reason: expect.stringMatching(/^maxDailyLoss: .*limit 150/),
      }),
    ]);
    await binance.agent.waitForLog((l) => l.msg === 'the server halted the account', 'the halt taken');
    const audit = await made('GET', `/api/admin/risk-audit?accountId=${accountId}&limit=1`);
    expect(audit.entries).toEqual([expect.objectContaining({ action: 'halted', actor: `agent ${binance.id}` })]);
    const next = await post(toBinance.authKey, 'BTCUSDT,buy,vol=0.001');
    expect(next.status).toBe('halted');
    expect((await deliveries(next.id)).map((d) => d.status)).toEqual(['halted']);
    // The agent closed nothing by itself.
    expect(venue().positions).toEqual([expect.objectContaining({ symbol: 'BTCUSDT', amount: 0.1 })]);
  });
});
