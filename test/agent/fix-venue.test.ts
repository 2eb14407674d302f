import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import type { TestServer } from '../support/start-test-server.js';
import { accountWithAgents, deliveriesOf, postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import { AgentProcess } from './support/agent-process.js';
import type { QuickFixExecutor, QuoteBroker } from './support/fix-counterparties.js';
import { type ExecutorBed, startExecutorBed } from './support/executor-bed.js';

/**
 * The whole path to a FIX 4.4 broker: a signal posted to the server reaches
 * `signalgate agent --venue fix` (a real process), which sends its order over FIX to QuickFIX's
 * executor (an independent FIX engine: fills limit orders, rejects market orders) and reads its
 * quotes from a cTrader-style quote session; the signal log shows the executor's fill or its
 * reason. Sequence numbers survive a restart of either side; a lost session is reconnected with backoff.
 */
const AGENT_COMP_ID = 'SGAGENT';
const CREDENTIALS = { user: 'trader-1', password: 'pw-s3cret-554' };

describe('an agent on a FIX 4.4 broker (QuickFIX executor)', () => {
  let bed: ExecutorBed | undefined;
  let server: TestServer;
  let dir: string;
  let executor: QuickFixExecutor;
  let quotes: QuoteBroker;
  let agentId: string;
  let authKey: string;
  let agent: AgentProcess | null = null;

  const start = () => bed!.startAgent();

  beforeAll(async () => {
    bed = await startExecutorBed({
      compId: AGENT_COMP_ID,
      credentials: CREDENTIALS,
      agentName: 'fix',
      heartbeatSeconds: 2,
      quotes: true,
      dirPrefix: 'signalgate-fix-',
    });
    ({ server, dir, executor, agentId, authKey } = bed);
    quotes = bed.quotes!;
  });

  afterAll(async () => {
    await agent?.kill();
    await bed?.stop();
  });

  it('logs on with the credentials from the environment, never logging the password', async () => {
    agent = start();
    await agent.waitForLog(
      (l) => l.msg === 'FIX logged on' && l.fix === 'trade',
      'the trade session logged on',
      40_000,
    );
    await agent.waitForLog((l) => l.msg === 'venue ready', 'the venue ready', 40_000);
    // The quote session logs on beside the trade session; the venue is ready without it.
    await waitUntil(() => quotes.logons.length > 0, 'the quote session logon', 40_000);
    expect(quotes.logons.at(-1)).toEqual(CREDENTIALS);
    expect(JSON.stringify(agent.lines())).not.toContain(CREDENTIALS.password);
    // Both local sessions opt out of TLS ("tls": false), and the agent says at start what that costs.
    const plain = agent.lines().filter((l) => l.level === 40 && /"tls" is false/.test(l.msg));
    expect(plain.map((l) => l.msg)).toEqual([
      expect.stringMatching(
        /"trade"\."tls" is false, so the FIX logon's username and password and every message of the session cross the network in clear/,
      ),
      expect.stringMatching(/"quote"\."tls" is false/),
    ]);
    expect(
      agent
        .lines()
        .filter((l) => l.msg === 'FIX connecting')
        .map((l) => l.tls),
    ).toEqual([false, false]);
  });

  it('a limit order is filled by the executor at its price, and the signal log shows the fill', async () => {
    const signal = await postSignal(server.url, authKey, 'EURUSD,buylimit,vol=0.1,entry_price=1.1');
    await waitUntil(
      async () => (await deliveriesOf(server, signal))[0].status === 'executed',
      'the ack of the buy limit',
      30_000,
    );
    const delivery = (await deliveriesOf(server, signal))[0];
    expect(delivery.message).toBe('placed buy limit 0.1 EURUSD at 1.1 (order 1)');
    expect(delivery.result.orders).toMatchObject([
      {
        clientId: clientOrderId(signal, 'o'),
        symbol: 'EURUSD',
        side: 'buy',
        kind: 'limit',
        volume: 0.1,
        price: 1.1,
        status: 'filled',
        filled: 0.1,
        average: 1.1,
      },
    ]);
    // 0.1 lot of 100,000 went out as 10,000 units, with the ClOrdID derived from the signal id.
    expect(executor.output).toContain(`11=${clientOrderId(signal, 'o')}`);
    expect(executor.output.includes(`38=10000${String.fromCharCode(1)}`) || executor.output.includes('38=10000|')).toBe(
      true,
    );
  });

  it('after a logon and an order, no file under the data directory holds the password, nor does the log', () => {
    const files = readdirSync(path.join(dir, 'agent'), { recursive: true, withFileTypes: true }).filter((entry) =>
      entry.isFile(),
    );
    // The FIX store (sequence numbers and the sent order) is among them: the check reads real files.
    expect(files.some((entry) => entry.name.endsWith('.body'))).toBe(true);
    for (const entry of files) {
      const file = path.join(entry.parentPath, entry.name);
      expect(readFileSync(file, 'latin1'), file).not.toContain(CREDENTIALS.password);
    }
    expect(agent!.stdout).not.toContain(CREDENTIALS.password);
    expect(agent!.stderr).not.toContain(CREDENTIALS.password);
  });

  it("a market order is rejected by the executor, and the signal's outcome is its reason", async () => {
    const signal = await postSignal(server.url, authKey, 'EURUSD,sell,vol=0.2');
    await waitUntil(
      async () => (await deliveriesOf(server, signal))[0].status === 'rejected',
      'the ack of the refused market order',
      30_000,
    );
    expect((await deliveriesOf(server, signal))[0].message).toBe(
      'fix:EXECUTOR refused the sell market order of 0.2 EURUSD: Value is incorrect (out of range) for this tag (tag 40)',
    );
  });

  it('sequence numbers survive a restart of the agent and of the executor; a lost session reconnects and the signal waits for it', async () => {
    const stopped = await agent!.stop();
    expect(stopped.code).toBe(0);
    expect(agent!.lines().some((l) => l.msg === 'FIX logout' && l.fix === 'trade')).toBe(true);
    const storeDir = path.join(dir, 'agent', 'fix');
    const seqFile = readdirSync(storeDir, { recursive: true })
      .map(String)
      .find((f) => f.includes('trade') && f.endsWith('.seqnums'))!;
    const [sent] = readFileSync(path.join(storeDir, seqFile), 'utf8')
      .trim()
      .split(/\s*:\s*/)
      .map(Number);
    expect(sent).toBeGreaterThan(1);

    // The executor also restarts (its own store keeps its numbers): the agent's logon must go
    // on from where it stopped, else the executor (ResetOnLogon=N) refuses it as too low.
    await executor.stop();
    await executor.run();
    agent = start();
    await agent.waitForLog(
      (l) => l.msg === 'FIX logged on' && l.fix === 'trade',
      'the trade session logged on again',
      40_000,
    );
    expect(executor.output).not.toMatch(/MsgSeqNum too low/);
    const signal = await postSignal(server.url, authKey, 'EURUSD,selllimit,vol=0.05,entry_price=1.2');
    await waitUntil(
      async () => (await deliveriesOf(server, signal))[0].status === 'executed',
      'the ack after both restarts',
      30_000,
    );
    expect((await deliveriesOf(server, signal))[0].result.orders[0]).toMatchObject({ status: 'filled', average: 1.2 });

    // The executor goes away under a running agent: the agent says so, reconnects with backoff,
    // and the signal posted meanwhile executes once it is back.
    await executor.stop();
    await agent.waitForLog((l) => l.msg === 'FIX session lost' && l.fix === 'trade', 'the session lost');
    const meanwhile = await postSignal(server.url, authKey, 'EURUSD,buylimit,vol=0.03,entry_price=1.09');
    // Taken by the agent (however long the push takes on a loaded machine), then held: neither
    // executed nor failed while the executor is away.
    let status = 'queued';
    await waitUntil(
      async () => (status = (await deliveriesOf(server, meanwhile))[0].status) !== 'queued',
      'the agent to take the signal',
    );
    expect(status).toBe('delivered');
    await new Promise((r) => setTimeout(r, 1500));
    expect((await deliveriesOf(server, meanwhile))[0].status).toBe('delivered');
    await executor.run();
    await waitUntil(
      async () => (await deliveriesOf(server, meanwhile))[0].status === 'executed',
      'the ack once the executor is back',
      60_000,
    );
  });

  it('without "tls" in the session file the session is TLS: no logon in clear to a plain counterparty, and no warning', async () => {
    const tlsDir = mkdtempSync(path.join(tmpdir(), 'signalgate-fix-tls-'));
    const tlsConfig = path.join(tlsDir, 'fix.json');
    const { tls: _plain, ...trade } = {
      host: '127.0.0.1',
      port: quotes.port,
      tls: false,
      senderCompId: AGENT_COMP_ID,
      targetCompId: 'cServer',
      senderSubId: 'QUOTE',
      targetSubId: 'QUOTE',
      heartbeatSeconds: 30,
      resetOnLogon: true,
    };
    writeFileSync(tlsConfig, JSON.stringify({ dialect: 'fix44', trade, account: { currency: 'USD', balance: 10000 } }));
    const { agents } = await accountWithAgents(server, ['fix-tls']);
    const logonsBefore = quotes.logons.length;
    const tlsAgent = AgentProcess.startVenue(
      server.url,
      agents[0]!.token,
      path.join(tlsDir, 'agent'),
      ['--venue', 'fix', '--fix-config', tlsConfig],
      {
        SIGNALGATE_FIX_USERNAME: CREDENTIALS.user,
        SIGNALGATE_FIX_PASSWORD: CREDENTIALS.password,
      },
    );
    try {
      const connecting = await tlsAgent.waitForLog(
        (l) => l.msg === 'FIX connecting',
        'the trade session connecting',
        40_000,
      );
      expect(connecting).toMatchObject({ fix: 'trade', tls: true });
      // The plain counterparty cannot speak TLS: the session goes down and is retried, never logged on.
      await tlsAgent.waitForLog(
        (l) => l.msg === 'FIX session down; reconnecting' || l.msg === 'FIX session lost',
        'the TLS session failing',
        40_000,
      );
      expect(tlsAgent.lines().some((l) => l.msg === 'FIX logged on')).toBe(false);
      expect(quotes.logons.length).toBe(logonsBefore);
      expect(tlsAgent.lines().some((l) => /"tls" is false/.test(l.msg))).toBe(false);
      expect(tlsAgent.stdout).not.toContain(CREDENTIALS.password);
    } finally {
      await tlsAgent.kill();
      rmSync(tlsDir, { recursive: true, force: true });
    }
  });

  it('a sequence gap either way is closed by resend requests and gap fills: the session stays up, orders flow, and each event is in the log and the state', async () => {
    const stopped = await agent!.stop();
    expect(stopped.code).toBe(0);
    const storeDir = path.join(dir, 'agent', 'fix');
    const seqFile = path.join(
      storeDir,
      readdirSync(storeDir, { recursive: true })
        .map(String)
        .find((f) => f.includes('trade') && f.endsWith('.seqnums'))!,
    );
    const [sent, received] = readFileSync(seqFile, 'utf8')
      .split(':')
      .map((n) => Number(n.trim()));
    expect(received).toBeGreaterThan(3);
    // Our next number 5 past what the executor expects (it asks us to resend 5 messages we never
    // sent: we fill the gap), and our expected one back at 2 (we ask the executor to resend what
    // it sent since: its ExecutionReports come again as PossDup and must change nothing).
    const pad = (n: number) => String(n).padStart(20, ' ');
    writeFileSync(seqFile, `${pad(sent! + 5)} : ${pad(2)}`);
    const ordersFile = path.join(
      storeDir,
      readdirSync(storeDir, { recursive: true })
        .map(String)
        .find((f) => f.endsWith('orders.json'))!,
    );
    const fillsBefore = (JSON.parse(readFileSync(ordersFile, 'utf8')) as { orders: { fills: unknown[] }[] }).orders.map(
      (o) => o.fills.length,
    );
    const executorFrom = executor.output.length;
    agent = start();
    await agent.waitForLog(
      (l) => l.msg === 'FIX logged on' && l.fix === 'trade',
      'the trade session logged on',
      40_000,
    );
    const signal = await postSignal(server.url, authKey, 'EURUSD,buylimit,vol=0.04,entry_price=1.08');
    await waitUntil(
      async () => (await deliveriesOf(server, signal))[0].status === 'executed',
      'the ack after the gaps',
      30_000,
    );
    expect((await deliveriesOf(server, signal))[0].result.orders[0]).toMatchObject({ status: 'filled', average: 1.08 });

    const SOH = String.fromCharCode(1);
    const exchanged = executor.output.slice(executorFrom).replaceAll(SOH, '|');
    // The executor asked us to resend from where it was, and we answered with a gap fill (123=Y).
    const messages = exchanged.split(/(?=8=FIX\.4\.4\|)/);
    const from = (sender: string, type: string) =>
      messages.filter((m) => m.includes(`|35=${type}|`) && m.includes(`|49=${sender}|`));
    expect(from('EXECUTOR', '2').some((m) => m.includes(`|7=${sent}|`))).toBe(true);
    expect(from(AGENT_COMP_ID, '4').some((m) => m.includes('|123=Y|'))).toBe(true);
    // We asked the executor to resend from 2; it resent its ExecutionReports as PossDup (43=Y).
    expect(from(AGENT_COMP_ID, '2').some((m) => m.includes('|7=2|'))).toBe(true);
    expect(from('EXECUTOR', '8').some((m) => m.includes('|43=Y|'))).toBe(true);
    // The resent ExecutionReports (PossDup) were applied once.
    const fillsAfter = (JSON.parse(readFileSync(ordersFile, 'utf8')) as { orders: { fills: unknown[] }[] }).orders.map(
      (o) => o.fills.length,
    );
    expect(fillsAfter.slice(0, fillsBefore.length)).toEqual(fillsBefore);
    // The trade session's, whose numbers were moved. The quote session's counterparty runs in this
    // test's worker, whose event loop other files share: under load its 2 s heartbeat can lapse.
    expect(agent.lines().filter((l) => l.msg === 'FIX session lost' && l.fix === 'trade')).toEqual([]);
    const logged = agent
      .lines()
      .filter((l) => l.fixSession === 'trade' && l.level === 30)
      .map((l) => l.msg);
    expect(logged.some((m) => /resend/i.test(m))).toBe(true);
    expect(logged.some((m) => /gap ?fill|sequence ?reset/i.test(m))).toBe(true);
    const state = async () => (await server.admin('GET', `/api/admin/agents/${agentId}`)).body.state;
    await waitUntil(
      async () =>
        ((await state())?.fixSessions?.trade?.events ?? []).some((e: { event: string }) => /resend/i.test(e.event)),
      'the resend in the published state',
      20_000,
    );
    const trade = (await state()).fixSessions.trade;
    expect(trade.loggedOn).toBe(true);
    expect(trade.events.map((e: { event: string }) => e.event)).toContain('logged on');
  });
});
