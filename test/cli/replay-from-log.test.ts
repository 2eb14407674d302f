import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentProcess } from '../agent/support/agent-process.js';
import { waitUntil } from '../delivery/support/delivery-setup.js';
import { adminRequest } from '../support/admin-client.js';
import { CLI_ADMIN_TOKEN, runCli, useCliStore } from '../support/cli-store.js';
import { spawnServer, type ServerProcess } from '../support/spawn-server.js';

/**
 * `signalgate simulate --from-log`: the signals a source really received, read back from the
 * store, replayed with the paper agent's settings against the ticks it traded on, give the
 * trades the paper account made. The ticks all carry one time, so the paper feed plays them at
 * start and every signal meets the same prices live and in the replay.
 */
const { env, cleanups } = useCliStore();
let server: ServerProcess;
let agent: AgentProcess | null = null;
let dir: string;

beforeAll(async () => {
  server = await spawnServer(env);
  cleanups.push(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
  });
  dir = mkdtempSync(path.join(tmpdir(), 'signalgate-replay-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
});
afterAll(async () => {
  await agent?.kill();
});

const admin = (method: string, urlPath: string, body?: unknown) =>
  adminRequest(server.url, CLI_ADMIN_TOKEN, method, urlPath, body);

function lines(stdout: string): Record<string, any>[] {
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, any>);
}

describe('signalgate simulate --from-log', () => {
  it('replays what a source received and gives the trades the paper account made', async () => {
    const account = (await admin('POST', '/api/admin/accounts', { name: 'Desk', monthlySignalQuota: 1000 })).body;
    const created = (await admin('POST', `/api/admin/accounts/${account.id}/agents`, { name: 'paper' })).body;
    const source = (await admin('POST', '/api/admin/sources', { accountId: account.id, name: 'TradingView' })).body;
    const ticks = path.join(dir, 'ticks.csv');
    writeFileSync(
      ticks,
      'time,symbol,bid,ask\n' +
        '2024-03-01T09:00:00Z,EURUSD,1.09950,1.09970\n' +
        '2024-03-01T09:00:00Z,USDJPY,150.100,150.120\n' +
        '2024-03-01T09:00:00Z,EURUSD,1.10000,1.10020\n',
    );
    agent = AgentProcess.start(server.url, created.token, path.join(dir, 'agent'), ['--ticks', ticks]);
    await agent.connected();
    await agent.waitForLog((l) => l.msg === 'the ticks file is played out; prices stay where they are', 'the ticks');

    const since = new Date().toISOString();
    const texts = [
      'EURUSD,buy,vol=0.2,sl_pips=20,tp_pips=40,comment=trend',
      'USDJPY,sell,vol=0.1,comment=fade',
      'EURUSD,closebuy,pct=50',
      // Not in the paper feed: refused live, and by the replay (no price), alike.
      'GBPUSD,buy,vol=0.1',
      'EURUSD,closelongsell,vol=0.1,sl_pips=30',
      'USDJPY,closesell',
    ];
    const ids: string[] = [];
    for (const text of texts) {
      const res = await fetch(`${server.url}/api/inbound/${source.authKey}`, { method: 'POST', body: text });
      expect(res.status).toBe(202);
      ids.push(((await res.json()) as { id: string }).id);
    }
    await agent.waitForHandled(texts.length);
    // A signal from another source in the same period is not replayed (refused by the agent, so the account is unchanged).
    const other = (await admin('POST', '/api/admin/sources', { accountId: account.id, name: 'Other' })).body;
    const otherRes = await fetch(`${server.url}/api/inbound/${other.authKey}`, { method: 'POST', body: 'GBPUSD,buy' });
    expect(otherRes.status).toBe(202);
    await agent.waitForHandled(texts.length + 1);
    const until = new Date(Date.now() + 1).toISOString();
    // What the paper account did: each delivery's outcome, and the account it published last.
    // The agent logs a signal handled before its acknowledgement reaches the server (outcomes are
    // written in groups), so the outcomes are read once the server holds all of them.
    let outcomes: { status: string; message: string }[] = [];
    await waitUntil(async () => {
      outcomes = [];
      for (const id of ids) {
        const d = (await admin('GET', `/api/admin/signals/${id}`)).body.deliveries[0];
        outcomes.push({ status: d.status, message: d.message });
      }
      return outcomes.every((o) => o.status !== 'queued' && o.status !== 'delivered');
    }, 'the outcomes of the six signals at the server');
    expect(outcomes.map((o) => o.status)).toEqual([
      'executed',
      'executed',
      'executed',
      'rejected',
      'executed',
      'executed',
    ]);

    const run = await runCli(
      env,
      'simulate',
      '--from-log',
      '--source',
      source.id,
      '--since',
      since,
      '--until',
      until,
      '--ticks',
      ticks,
    );
    expect(run.stderr).toBe(
      `signalgate simulate: replaying 6 signals source ${source.id} received from ${since} until ${until}\n`,
    );
    expect(run.code).toBe(0);
    const out = lines(run.stdout);
    const summary = out.find((l) => l.type === 'summary')!;

    // The replay ends where the paper account ended: balance, open positions (the sell of signal 5) and orders.
    const published = async () => (await admin('GET', `/api/admin/agents/${created.id}`)).body.state;
    await waitUntil(async () => (await published())?.balance === summary.balance, 'the paper account published');
    const state = await published();
    expect(summary.balance).toBe(state.balance);
    expect(summary.positions).toEqual(state.positions);
    expect(summary.orders).toEqual(state.orders);
    expect(summary.positions).toEqual([
      expect.objectContaining({ symbol: 'EURUSD', side: 'sell', volume: 0.1, sl: 1.103 }),
    ]);

    // The same fills, signal by signal: every price the agent reported is the replay's.
    const opened = out.filter((l) => l.type === 'opened' || l.type === 'closed' || l.type === 'partial_close');
    expect(opened.map((l) => l.price)).toEqual([1.1002, 150.1, 1.1, 1.1, 1.1, 150.12]);
    expect(outcomes[0]!.message).toMatch(/^opened buy 0.2 EURUSD at 1.1002/);
    expect(outcomes[1]!.message).toMatch(/^opened sell 0.1 USDJPY at 150.1\b/);
    expect(out.find((l) => l.type === 'rejected')).toMatchObject({ signal: 'GBPUSD,buy,vol=0.1' });

    // The trades: each close of a position is one, linked to the signals that opened and closed it.
    const trades = out.filter((l) => l.type === 'trade');
    expect(
      trades.map((t) => [t.symbol, t.side, t.lots, t.realizedProfit, t.openingSignalId, t.closingSignalIds]),
    ).toEqual([
      // 0.1 of the 0.2 long closed at the bid 1.1000: (1.1000 - 1.1002) × 0.1 × 100,000 = -2 USD.
      ['EURUSD', 'long', 0.1, -2, ids[0], [ids[2]]],
      ['EURUSD', 'long', 0.1, -2, ids[0], [ids[4]]],
      // Sold 0.1 at 150.100, bought back at 150.120: -0.02 × 0.1 × 100,000 JPY = -200 JPY / 150.12 = -1.33 USD.
      ['USDJPY', 'short', 0.1, -1.33, ids[1], [ids[5]]],
      ['EURUSD', 'short', 0.1, null, ids[4], []],
    ]);
    expect(trades[0]).toMatchObject({ strategy: 'trend', quoteAtReceipt: 1.1002, entryPrice: 1.1002 });
    const statistics = out.find((l) => l.type === 'statistics' && l.of === 'replay')!;
    // -2 - 2 - 1.33 = -5.33: what the paper balance lost.
    expect(statistics).toMatchObject({ trades: 3, openTrades: 1, wins: 0, losses: 3, netProfit: -5.33 });
    expect(statistics.netProfit).toBeCloseTo(state.balance - 10000, 8);

    // A slower path: with --latency 1000 the buy is applied a second after its receipt, after a
    // tick that moved the price (500 ms after the receipt), so it pays the new ask; the slippage
    // is against the quote when it was received.
    const receivedAt = Date.parse((await admin('GET', `/api/admin/signals/${ids[0]}`)).body.receivedAt);
    const moved = path.join(dir, 'ticks-moved.csv');
    writeFileSync(moved, `${readFileSync(ticks, 'utf8')}${receivedAt + 500},EURUSD,1.10100,1.10120\n`);
    const slow = await runCli(
      env,
      ...['simulate', '--from-log', '--source', source.id, '--since', since, '--until', until, '--ticks', moved],
      ...['--latency', '1000'],
    );
    expect(slow.code).toBe(0);
    const slowTrade = lines(slow.stdout).find((l) => l.type === 'trade')!;
    expect(slowTrade).toMatchObject({ entryPrice: 1.1012, quoteAtReceipt: 1.1002, openingSignalId: ids[0] });
    expect(Date.parse(slowTrade.firstFillAt) - Date.parse(slowTrade.receivedAt)).toBe(1000);

    // The paper agent reported its fills to the ledger: the replay with unchanged settings made the
    // same trades as the account really did, signal by signal.
    const real = out.find((l) => l.type === 'statistics' && l.of === 'ledger')!;
    expect(real).toMatchObject({ trades: 3, openTrades: 1, losses: 3, netProfit: -5.33 });
    const comparison = out.at(-1)!;
    expect(comparison).toMatchObject({
      type: 'comparison',
      difference: { trades: 0, netProfit: 0, winRate: 0, profitFactor: 0, maxDrawdown: 0 },
    });
    expect(comparison.signals).toEqual([
      { openingSignalId: ids[0], replay: { trades: 2, netProfit: -4 }, ledger: { trades: 2, netProfit: -4 } },
      { openingSignalId: ids[1], replay: { trades: 1, netProfit: -1.33 }, ledger: { trades: 1, netProfit: -1.33 } },
    ]);
  });

  it('says what is missing or wrong in the flags, naming the flag', async () => {
    const ticks = path.join(dir, 'ticks-1.csv');
    writeFileSync(ticks, '2024-03-01T09:00:00Z,EURUSD,1.1,1.1002\n');
    const noSource = await runCli(env, 'simulate', '--from-log', '--since', '2026-11-01', '--ticks', ticks);
    expect([noSource.code, noSource.stderr]).toEqual([
      1,
      'signalgate simulate: --from-log needs --source ID: the source whose signals to replay (signalgate sources list shows them)\n',
    ]);
    const unknown = await runCli(
      env,
      'simulate',
      '--from-log',
      '--source',
      'src_nope',
      '--since',
      '2026-11-01',
      '--ticks',
      ticks,
    );
    expect([unknown.code, unknown.stderr]).toEqual([
      1,
      'signalgate simulate: no source src_nope in this store; signalgate sources list shows its sources\n',
    ]);
    const backwards = await runCli(
      env,
      ...[
        'simulate',
        '--from-log',
        '--source',
        'src_x',
        '--since',
        '2026-11-02',
        '--until',
        '2026-11-01',
        '--ticks',
        ticks,
      ],
    );
    expect(backwards.stderr).toBe(
      'signalgate simulate: --until (2026-11-01T00:00:00.000Z) must be after --since (2026-11-02T00:00:00.000Z)\n',
    );
    const both = await runCli(env, 'simulate', '--from-log', '--signals', ticks, '--ticks', ticks);
    expect(both.stderr).toBe('signalgate simulate: give --signals or --from-log, not both\n');
    const stray = await runCli(env, 'simulate', '--signals', ticks, '--since', '2026-11-01', '--ticks', ticks);
    expect(stray.stderr).toBe(
      'signalgate simulate: --since applies only with --from-log; add --from-log, or leave it out\n',
    );
    const badLatency = await runCli(
      env,
      ...['simulate', '--from-log', '--source', 'src_x', '--since', '2026-11-01', '--latency', '1.5', '--ticks', ticks],
    );
    expect(badLatency.stderr).toBe(
      'signalgate simulate: --latency must be a whole number of milliseconds, 0 or more, got "1.5"\n',
    );
  });
});
