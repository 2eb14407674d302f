import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stopProcess } from './bench-process.js';
import { type BenchServer, createPostgresSchema, startSignalgate } from './bench-server.js';
import { type Answer, type Scheduled, sendOnSchedule } from './open-loop.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** How long after the last answer the agents get to take the rest. */
const DRAIN_MS = 15_000;
/** The senders' kept-alive connections (BENCH_SENDER_CONNECTIONS). */
const SENDER_CONNECTIONS = Number(process.env.BENCH_SENDER_CONNECTIONS ?? 200);

export type BenchStore = 'sqlite' | 'postgres';
export type BenchTransport = 'websocket' | 'long-poll';

export interface AgentLoadRun {
  /** Epoch ms of the schedule's start. */
  startAt: number;
  answers: Answer[];
  /** Signal id → epoch ms an agent client handed it over. */
  arrivals: Record<string, number>;
  ackFailures: number;
  /** The server's `/metrics` right after the last answer (read once before the start too, which resets its event-loop maxima). */
  metrics: string;
}

/**
 * One open-loop run against a fresh signalgate: `agents` accounts, each with one agent and
 * `sourcesPerAgent` sources routed to it; an agents process connected on `transport`; then the
 * schedule built from the sources' keys, sent on time; then a wait until the agents hold every
 * accepted signal (or DRAIN_MS passed).
 */
export async function runAgentLoad(
  store: BenchStore,
  transport: BenchTransport,
  agents: number,
  sourcesPerAgent: number,
  buildSchedule: (sourceKeys: string[]) => Scheduled[],
): Promise<AgentLoadRun | null> {
  let server: BenchServer;
  if (store === 'postgres') {
    const schema = await createPostgresSchema();
    if (schema === null) return null;
    server = await startSignalgate({ SIGNALGATE_DATABASE_URL: schema.url }, {}, { cleanup: schema.drop });
  } else {
    server = await startSignalgate({});
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-bench-agents-'));
  let agentsProcess: ChildProcess | null = null;
  try {
    const tokens: string[] = [];
    const sourceKeys: string[] = [];
    for (let first = 0; first < agents; first += 20) {
      const batch = Array.from({ length: Math.min(20, agents - first) }, (_, k) => first + k);
      const provisioned = await Promise.all(batch.map((n) => provisionTenant(server, n, sourcesPerAgent)));
      for (const tenant of provisioned) {
        tokens.push(tenant.token);
        sourceKeys.push(...tenant.keys);
      }
    }
    // Source i belongs to agent i % agents: consecutive signals go to different tenants.
    const interleaved = Array.from({ length: sourceKeys.length }, (_, i) => sourceKeys[(i % agents) * sourcesPerAgent + Math.floor(i / agents)]!);
    const configFile = path.join(dir, 'agents.json');
    const resultsFile = path.join(dir, 'arrivals.json');
    writeFileSync(configFile, JSON.stringify({ server: server.url, tokens, transport, resultsFile }));
    const child = spawn(process.execPath, [path.join(here, 'bench-agents.js'), configFile], { stdio: ['ignore', 'pipe', 'inherit'] });
    agentsProcess = child;
    let held = 0;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the ${agents} agents did not all connect by ${transport} within 60 s`)), 60_000);
      let partial = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        const lines = (partial + chunk.toString()).split('\n');
        partial = lines.pop()!;
        for (const line of lines) {
          const message = JSON.parse(line) as { ready?: number; held?: number };
          if (message.held !== undefined) held = message.held;
          if (message.ready !== undefined) {
            clearTimeout(timer);
            resolve();
          }
        }
      });
      child.once('exit', (code) => reject(new Error(`the agents process exited with ${code}`)));
    });
    await server.adminGet('/metrics');
    const { startAt, answers } = await sendOnSchedule(server.url, buildSchedule(interleaved), SENDER_CONNECTIONS);
    const metrics = await server.adminGet('/metrics');
    const accepted = answers.filter((a) => a.id !== null).length;
    const deadline = Date.now() + DRAIN_MS;
    while (Date.now() < deadline && held < accepted) await sleep(100);
    await stopProcess(child);
    agentsProcess = null;
    const results = JSON.parse(readFileSync(resultsFile, 'utf8')) as { arrivals: Record<string, number>; ackFailures: number };
    return { startAt, answers, arrivals: results.arrivals, ackFailures: results.ackFailures, metrics };
  } finally {
    if (agentsProcess !== null) await stopProcess(agentsProcess);
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function provisionTenant(server: BenchServer, n: number, sources: number): Promise<{ token: string; keys: string[] }> {
  const account = await server.admin('/api/admin/accounts', { name: `tenant ${n}`, monthlySignalQuota: 1_000_000_000 });
  const agent = await server.admin(`/api/admin/accounts/${account.id}/agents`, { name: `agent ${n}` });
  const keys: string[] = [];
  for (let s = 0; s < sources; s++) {
    const source = await server.admin('/api/admin/sources', { accountId: account.id, name: `source ${n}.${s}`, agentIds: [agent.id] });
    keys.push(source.authKey);
  }
  return { token: agent.token, keys };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
