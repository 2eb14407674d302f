import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { AgentProcess } from '../test/agent/support/agent-process.js';
import startPrivatePostgres from '../test/support/private-postgres.js';
import { startSignalgate, type BenchServer } from './bench-server.js';

/**
 * What the benchmarks of a signal's way to the venue share (`--alert-to-order`, `--basket`): a
 * real `signalgate serve` per store, real agent processes, provisioning, posting and reading the
 * signal log. Times are Unix milliseconds with a fraction (`now()`), one clock for this process,
 * the agents (their acknowledgement's timings) and the test exchange, all on this machine.
 */
export type VenueBenchStore = 'sqlite' | 'postgres';

export const now = (): number => performance.timeOrigin + performance.now();

export interface SignalSeen {
  id: string;
  receivedAt: string;
  deliveries: {
    status: string;
    message: string | null;
    deliveredAt: string | null;
    ackedAt: string | null;
    timings: {
      decidedAt: string | null;
      sentAt: string | null;
      venueAckedAt: string | null;
      filledAt: string | null;
    } | null;
  }[];
}

/**
 * The PostgreSQL the modes run on: SIGNALGATE_BENCH_DATABASE_URL when set; otherwise a private,
 * throwaway cluster as the tests start one (test/support/private-postgres.ts), stopped after.
 */
export async function benchPostgres(): Promise<{ url: string; stop: () => Promise<void> }> {
  const given = process.env.SIGNALGATE_BENCH_DATABASE_URL;
  if (given !== undefined && given !== '') return { url: given, stop: async () => undefined };
  const before = process.env.SIGNALGATE_TEST_DATABASE_URL;
  delete process.env.SIGNALGATE_TEST_DATABASE_URL;
  const stop = await startPrivatePostgres();
  const url = process.env.SIGNALGATE_TEST_DATABASE_URL!;
  if (before !== undefined) process.env.SIGNALGATE_TEST_DATABASE_URL = before;
  return { url, stop: async () => void (await stop?.()) };
}

/** A server on the store: SQLite in its data directory, or a fresh schema on `postgresUrl`. */
/** Node flags for the server (BENCH_SERVER_NODE_ARGS, space-separated), e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`. */
const SERVER_NODE_ARGS = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');

export async function serverOn(store: VenueBenchStore, postgresUrl: string | null): Promise<BenchServer> {
  if (store === 'sqlite') return startSignalgate({}, { nodeArgs: SERVER_NODE_ARGS });
  if (postgresUrl === null) throw new Error('no PostgreSQL for the postgres rows');
  const schema = `bench_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  await client.query(`CREATE SCHEMA ${schema}`);
  await client.end();
  const url = new URL(postgresUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return startSignalgate(
    { SIGNALGATE_DATABASE_URL: url.toString() },
    { nodeArgs: SERVER_NODE_ARGS },
    {
      cleanup: async () => {
        const c = new pg.Client({ connectionString: postgresUrl });
        await c.connect();
        await c.query(`DROP SCHEMA ${schema} CASCADE`);
        await c.end();
      },
    },
  );
}

/** One account with `agents` agents, each with a source of its own routed to it alone. */
export async function provision(
  server: BenchServer,
  name: string,
  agents: number,
): Promise<{ id: string; token: string; authKey: string }[]> {
  const account = await server.admin('/api/admin/accounts', { name, monthlySignalQuota: 10_000_000 });
  const made: { id: string; token: string; authKey: string }[] = [];
  for (let i = 0; i < agents; i++) {
    const agent = await server.admin(`/api/admin/accounts/${account.id}/agents`, { name: `${name}-${i}` });
    const source = await server.admin('/api/admin/sources', {
      accountId: account.id,
      name: `${name}-${i}`,
      agentIds: [agent.id],
    });
    made.push({ id: agent.id, token: agent.token, authKey: source.authKey });
  }
  return made;
}

/** Agent processes and their data directories, removed by `stopAll`. */
export class AgentFleet {
  private readonly agents: AgentProcess[] = [];
  private readonly dirs: string[] = [];

  /**
   * An agent process on `args`' venue, ready when the promise resolves (its venue ready and
   * connected); `agents`: how many agents the process runs (`--tokens-file`), each connected.
   */
  async start(
    server: BenchServer,
    token: string,
    args: string[],
    env: Record<string, string> = {},
    nodeArgs: string[] = [],
    agents = 1,
  ): Promise<AgentProcess> {
    const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-bench-agent-'));
    this.dirs.push(dir);
    const agent = AgentProcess.startVenue(server.url, token, dir, args, env, nodeArgs);
    this.agents.push(agent);
    const connected = new Set<unknown>();
    await agent.waitForLog(
      (l) => {
        if (l.msg === 'connected') connected.add(l.tokensFileLine);
        return connected.size >= agents;
      },
      `${agents} agent(s) connected`,
      180_000,
    );
    return agent;
  }

  /** The agents' process ids. */
  pids(): number[] {
    return this.agents.map((agent) => agent.child.pid!);
  }

  /** SIGTERM, and waits for the agent's own exit (a `--cpu-prof` profile is written only then). */
  async stopGracefully(agent: AgentProcess): Promise<void> {
    agent.child.kill('SIGTERM');
    await Promise.race([
      new Promise((resolve) => agent.child.once('exit', resolve)),
      new Promise((resolve) => setTimeout(resolve, 15_000)),
    ]);
  }

  async stopAll(): Promise<void> {
    for (const agent of this.agents.splice(0)) await agent.kill();
    for (const dir of this.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}

const keptAlive = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** POSTs a text signal; answers its id and when the POST started (`now()`). */
export function postSignal(url: string, authKey: string, text: string): Promise<{ id: string; startedAt: number }> {
  const startedAt = now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/api/inbound/${authKey}`,
      { method: 'POST', agent: keptAlive, headers: { 'content-type': 'text/plain' } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          if (res.statusCode !== 202) reject(new Error(`inbound: ${res.statusCode} ${body}`));
          else resolve({ id: (JSON.parse(body) as { id: string }).id, startedAt });
        });
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

/** The signal once its delivery is settled (executed, rejected, failed or expired); fails after `timeoutMs`. */
export async function settledSignal(
  server: BenchServer,
  id: string,
  timeoutMs = 30_000,
  everyMs = 5,
): Promise<SignalSeen> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const signal = JSON.parse(await server.adminGet(`/api/admin/signals/${id}`)) as SignalSeen;
    const status = signal.deliveries[0]?.status;
    if (status !== undefined && status !== 'queued' && status !== 'delivered') return signal;
    if (Date.now() > deadline) throw new Error(`signal ${id} had no outcome within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** The executed delivery of a settled signal; anything else fails the run with the agent's message. */
export function executed(signal: SignalSeen): SignalSeen['deliveries'][number] {
  const delivery = signal.deliveries[0]!;
  if (delivery.status !== 'executed')
    throw new Error(`signal ${signal.id} was ${delivery.status}: ${delivery.message ?? ''}`);
  return delivery;
}

/** p50, p99 and max of the values, in a table row's cells. */
export function spread(values: number[]): { p50: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
  return { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1]! };
}
