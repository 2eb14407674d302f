import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { clientOrderId } from '../src/agent/client-order-id.js';
import { spawnListening, stopProcess } from './bench-process.js';
import { CTraderCounterparty } from '../test/fakes/ctrader-counterparty.js';
import { spawn } from 'node:child_process';
import { freePort } from '../test/support/free-port.js';
import { BUILT_CLI } from './bench-files.js';

const WARM_UP = 20;
/** A signal without its outcome within this long fails the run instead of hanging it. */
const LOST_AFTER_MS = 20_000;
const ADMIN = randomBytes(32).toString('base64url');
const AGENT_COMP_ID = 'bench.agent';
const CREDENTIALS = { user: 'bench', password: randomBytes(8).toString('hex') };

export interface FixRoundTripRow {
  signals: number;
  handoffP50: number;
  handoffP99: number;
  roundTripP50: number;
  roundTripP99: number;
}

/**
 * `npm run bench -- --fix`: a signal's path to a FIX broker and back. A `signalgate serve`
 * process (fresh SQLite store), `signalgate agent --venue fix` as a process, and the cTrader
 * counterparty (jspurefix acceptor) in this process. One signal at a time, alternately a market
 * buy and its close, each waiting for its outcome before the next. Hand-off: from the start of
 * the inbound POST to the NewOrderSingle arriving at the counterparty (one clock: this
 * process). Round trip: from the start of the POST to the acknowledgement holding the
 * ExecutionReport's fill in the signal log (the server's `ackedAt`, same machine's clock, ms).
 */
export async function runFixRoundTrip(signals: number): Promise<FixRoundTripRow> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'signalgate-fix-bench-'));
  const server = await spawnListening(
    BUILT_CLI,
    ['serve'],
    { SIGNALGATE_DATA_DIR: dataDir, SIGNALGATE_ADMIN_TOKEN: ADMIN },
    path.join(dataDir, 'server.log'),
  );
  const arrivals = new Map<string, number>();
  const broker = new CTraderCounterparty({
    tradePort: await freePort(),
    quotePort: await freePort(),
    agentCompId: AGENT_COMP_ID,
    credentials: CREDENTIALS,
    prices: { '1': { bid: 1.105, ask: 1.1052 } },
    onMessage: (type, m) => {
      if (type === 'D') arrivals.set(String(m.ClOrdID), performance.now());
    },
  });
  broker.start();
  let agent: ReturnType<typeof spawn> | null = null;
  try {
    const { token, authKey } = await provision(server.url);
    const configFile = path.join(dataDir, 'fix.json');
    writeFileSync(configFile, JSON.stringify(broker.agentConfig(1_000_000)));
    agent = spawn(
      process.execPath,
      [BUILT_CLI, 'agent', '--server', server.url, '--venue', 'fix', '--fix-config', configFile],
      {
        env: {
          ...process.env,
          SIGNALGATE_AGENT_TOKEN: token,
          SIGNALGATE_DATA_DIR: path.join(dataDir, 'agent'),
          SIGNALGATE_LOG_LEVEL: 'warn',
          SIGNALGATE_FIX_USERNAME: CREDENTIALS.user,
          SIGNALGATE_FIX_PASSWORD: CREDENTIALS.password,
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    const handoff: number[] = [];
    const roundTrip: number[] = [];
    for (let i = 0; i < WARM_UP + signals; i++) {
      const startedWall = Date.now();
      const started = performance.now();
      const id = await post(server.url, authKey, i % 2 === 0 ? 'EURUSD,buy,vol=0.01' : 'EURUSD,closebuy');
      const ackedAt = await outcome(server.url, id, i === 0 ? 60_000 : LOST_AFTER_MS);
      const arrived = arrivals.get(clientOrderId(id, i % 2 === 0 ? 'o' : 'c1'));
      if (arrived === undefined) throw new Error(`signal ${i} (${id}) reached the broker as no NewOrderSingle`);
      if (i < WARM_UP) continue;
      handoff.push(arrived - started);
      roundTrip.push(ackedAt - startedWall);
    }
    handoff.sort((a, b) => a - b);
    roundTrip.sort((a, b) => a - b);
    const row = {
      signals,
      handoffP50: percentile(handoff, 0.5),
      handoffP99: percentile(handoff, 0.99),
      roundTripP50: percentile(roundTrip, 0.5),
      roundTripP99: percentile(roundTrip, 0.99),
    };
    process.stdout.write(
      `\nFIX path, ${signals} signals after ${WARM_UP} warm-up, one at a time (market buy, then its close), loopback, SQLite store,\n` +
        `agent process on --venue fix (cTrader dialect) against a jspurefix counterparty, node ${process.version}\n` +
        `hand-off: POST start → NewOrderSingle at the counterparty; round trip: POST start → acknowledgement with the fill in the signal log\n\n` +
        `| path | p50 ms | p99 ms |\n|---|---|---|\n` +
        `| hand-off | ${row.handoffP50.toFixed(2)} | ${row.handoffP99.toFixed(2)} |\n` +
        `| round trip | ${row.roundTripP50.toFixed(0)} | ${row.roundTripP99.toFixed(0)} |\n`,
    );
    return row;
  } finally {
    if (agent) await stopProcess(agent);
    broker.stop();
    await stopProcess(server.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function provision(url: string): Promise<{ token: string; authKey: string }> {
  const admin = async (urlPath: string, body: unknown) => {
    const res = await fetch(url + urlPath, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 201) throw new Error(`${urlPath}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { id: string; token: string; authKey: string };
  };
  const account = await admin('/api/admin/accounts', { name: 'fix bench', monthlySignalQuota: 1_000_000 });
  const agent = await admin(`/api/admin/accounts/${account.id}/agents`, { name: 'fix' });
  const source = await admin('/api/admin/sources', { accountId: account.id, name: 'fix', agentIds: [agent.id] });
  return { token: agent.token, authKey: source.authKey };
}

async function post(url: string, authKey: string, text: string): Promise<string> {
  const res = await fetch(`${url}/api/inbound/${authKey}`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain' },
    body: text,
  });
  const body = (await res.json()) as { id: string };
  if (res.status !== 202) throw new Error(`inbound: ${res.status} ${JSON.stringify(body)}`);
  return body.id;
}

/** Waits for the signal's acknowledgement; answers its `ackedAt` (Unix ms). Fails on anything but executed. */
async function outcome(url: string, id: string, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${url}/api/admin/signals/${id}`, { headers: { authorization: `Bearer ${ADMIN}` } });
    const body = (await res.json()) as {
      deliveries: { status: string; ackedAt: string | null; message: string | null }[];
    };
    const delivery = body.deliveries[0];
    if (delivery?.ackedAt) {
      if (delivery.status !== 'executed')
        throw new Error(`signal ${id} was ${delivery.status}: ${delivery.message ?? ''}`);
      return Date.parse(delivery.ackedAt);
    }
    if (Date.now() > deadline) throw new Error(`signal ${id} had no outcome within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}
