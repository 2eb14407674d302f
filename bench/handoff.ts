import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { AgentClient, type TransportChoice } from '../src/agent/agent-client.js';
import { spawnListening, stopProcess } from './bench-process.js';
import { BUILT_CLI } from './bench-files.js';

/**
 * `node --import ./bench/run-typescript.mjs bench/handoff.ts` (after `npm run build`): hand-off latency, from the moment the sender has the 202 of
 * its inbound request (and from the moment it started the request) to the moment the agent
 * client hands the signal to its consumer, over the WebSocket and over long-poll. A `signalgate serve` process on a fresh store (SQLite, or
 * PostgreSQL when SIGNALGATE_DATABASE_URL is set) on loopback; sender and agent in this
 * process, so both instants are read from one clock. One signal at a time, each acknowledged
 * before the next is sent: the latency of an idle agent, not of a backlog. Bounded: it stops
 * after BENCH_HANDOFF_SIGNALS (default 10,000) signals per transport.
 */
const SIGNALS = Number(process.env.BENCH_HANDOFF_SIGNALS ?? 10_000);
const WARM_UP = 500;
/** A signal not handed over within this long fails the run instead of hanging it. */
const LOST_AFTER_MS = 10_000;
const ADMIN = randomBytes(32).toString('base64url');

interface Sample {
  /** Agent has it − sender has the 202, ms; negative when the push beat the answer. */
  afterAnswer: number[];
  /** Agent has it − sender started the request, ms: ingest and hand-off together. */
  endToEnd: number[];
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'signalgate-handoff-'));
  const server = await spawnListening(
    BUILT_CLI,
    ['serve'],
    { SIGNALGATE_DATA_DIR: dataDir, SIGNALGATE_ADMIN_TOKEN: ADMIN },
    path.join(dataDir, 'server.log'),
  );
  const pool = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const store = ((await (await fetch(`${server.url}/healthz`)).json()) as { store: string }).store;
    const rows: Array<[string, Sample]> = [];
    for (const transport of ['websocket', 'long-poll'] as const) {
      const { token, authKey } = await provision(server.url, transport);
      const sample = await measure(server.url, pool, token, authKey, transport);
      rows.push([transport === 'websocket' ? 'WebSocket' : 'long-poll', sample]);
    }
    process.stdout.write(
      `\nhand-off latency, ${SIGNALS} signals per transport after ${WARM_UP} warm-up, one at a time, each acked before the next,\n` +
        `loopback, ${store} store, node ${process.version}\n` +
        `202→agent: from the sender holding the 202 to the agent client handing the signal to its consumer\n` +
        `(negative: the agent had it before the 202 reached the sender); send→agent: from the start of the POST\n\n` +
        `| transport | 202→agent p50 ms | 202→agent p99 ms | agent first | send→agent p50 ms | send→agent p99 ms | send→agent max ms |\n` +
        `|---|---|---|---|---|---|---|\n`,
    );
    for (const [name, sample] of rows) {
      const after = [...sample.afterAnswer].sort((a, b) => a - b);
      const total = [...sample.endToEnd].sort((a, b) => a - b);
      const first = after.filter((v) => v < 0).length;
      process.stdout.write(
        `| ${name} | ${ms(percentile(after, 0.5))} | ${ms(percentile(after, 0.99))} | ${((100 * first) / after.length).toFixed(1)} % | ` +
          `${ms(percentile(total, 0.5))} | ${ms(percentile(total, 0.99))} | ${ms(total[total.length - 1]!)} |\n`,
      );
    }
  } finally {
    pool.destroy();
    await stopProcess(server.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** An account, one agent and a source routed to it. */
async function provision(url: string, label: string): Promise<{ token: string; authKey: string }> {
  const admin = async (urlPath: string, body: unknown) => {
    const res = await fetch(url + urlPath, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 201) throw new Error(`${urlPath}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { id: string; token: string; authKey: string };
  };
  const account = await admin('/api/admin/accounts', { name: `handoff ${label}`, monthlySignalQuota: 1_000_000 });
  const agent = await admin(`/api/admin/accounts/${account.id}/agents`, { name: label });
  const source = await admin('/api/admin/sources', { accountId: account.id, name: label, agentIds: [agent.id] });
  return { token: agent.token, authKey: source.authKey };
}

async function measure(
  url: string,
  pool: http.Agent,
  token: string,
  authKey: string,
  transport: TransportChoice,
): Promise<Sample> {
  const client = new AgentClient({ server: url, token, transport });
  const arrivals = new Map<string, number>();
  const waiting: { arrived: ((id: string) => void) | null } = { arrived: null };
  const consumer = (async () => {
    for await (const signal of client.signals()) {
      arrivals.set(signal.id, performance.now());
      await client.ack(signal.id, { status: 'executed' });
      waiting.arrived?.(signal.id);
    }
  })();
  await new Promise<void>((resolve) => {
    const check = () => (client.transport === transport ? resolve() : setTimeout(check, 10));
    check();
  });

  const sample: Sample = { afterAnswer: [], endToEnd: [] };
  for (let i = 0; i < WARM_UP + SIGNALS; i++) {
    const handedOver = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`signal ${i} was not handed over within ${LOST_AFTER_MS} ms`)),
        LOST_AFTER_MS,
      );
      waiting.arrived = (id) => {
        clearTimeout(timer);
        resolve(id);
      };
    });
    const sentAt = performance.now();
    const { id, answeredAt } = await postSignal(
      url,
      pool,
      authKey,
      i % 2 === 0 ? 'EURUSD,buy,vol=0.01' : 'EURUSD,closebuy',
    );
    const handedId = await handedOver;
    if (handedId !== id) throw new Error(`expected ${id}, the agent got ${handedId}`);
    const arrivedAt = arrivals.get(id)!;
    arrivals.delete(id);
    if (i < WARM_UP) continue;
    sample.afterAnswer.push(arrivedAt - answeredAt);
    sample.endToEnd.push(arrivedAt - sentAt);
  }
  await client.close();
  await consumer;
  return sample;
}

/** POSTs a text signal; answers its id and the instant the 202's head arrived. */
function postSignal(
  url: string,
  pool: http.Agent,
  authKey: string,
  text: string,
): Promise<{ id: string; answeredAt: number }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/api/inbound/${authKey}`, {
      method: 'POST',
      agent: pool,
      headers: { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(text) },
    });
    req.on('response', (res) => {
      const answeredAt = performance.now();
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => {
        if (res.statusCode !== 202) return reject(new Error(`inbound answered ${res.statusCode}: ${body}`));
        resolve({ id: (JSON.parse(body) as { id: string }).id, answeredAt });
      });
    });
    req.on('error', reject);
    req.end(text);
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

function ms(value: number): string {
  return value.toFixed(3);
}

await main();
