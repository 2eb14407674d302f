import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stopProcess } from './bench-process.js';
import { type BenchServer, createPostgresSchema, startSignalgate } from './bench-server.js';
import type { Carrier } from './bench-agent.js';
import { type Answer, type Scheduled, sendOnSchedule } from './open-loop.js';
import { cpuMillis } from './process-cpu.js';
import { benchFile, TYPESCRIPT_NODE_ARGS } from './bench-files.js';

/** How long after the last answer the agents get to take the rest. */
const DRAIN_MS = 15_000;
/** The senders' kept-alive connections (BENCH_SENDER_CONNECTIONS). */
const SENDER_CONNECTIONS = Number(process.env.BENCH_SENDER_CONNECTIONS ?? 200);
/** Extra node flags for the server (BENCH_SERVER_NODE_ARGS, space-separated), e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`. */
const SERVER_NODE_ARGS = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
/** The same for the agents process (BENCH_AGENTS_NODE_ARGS). */
const AGENTS_NODE_ARGS = (process.env.BENCH_AGENTS_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');

/** `postgres-2`: two instances on one PostgreSQL database, agents and senders split between them. */
export type BenchStore = 'sqlite' | 'postgres' | 'postgres-2';
export type BenchTransport = 'websocket' | 'long-poll';

export interface AgentLoadRun {
  /** Epoch ms of the schedule's start. */
  startAt: number;
  answers: Answer[];
  /** Signal id → epoch ms an agent took it. */
  arrivals: Record<string, number>;
  /** Signal id → the message that brought it to its agent. */
  carriers: Record<string, Carrier>;
  ackFailures: number;
  /** The server's `/metrics` right after the last answer (read once before the start too, which resets its event-loop maxima). */
  metrics: string;
  /** The servers' CPU (user + system, from /proc) from the measured run's start to every accepted signal held. */
  serverCpuMs: number;
}

/**
 * One open-loop run against a fresh signalgate: `agents` accounts, each with one agent and
 * `sourcesPerAgent` sources routed to it; an agents process connected on `transport`; then the
 * schedule built from the sources' keys, sent on time `warmups` times, each followed by a wait
 * until the agents hold and have acknowledged every signal accepted so far, so the measured run
 * meets a server that has already served (V8 has compiled its hot paths); then the schedule sent
 * once more, measured, and a wait until the agents hold every accepted signal (or DRAIN_MS
 * passed). Only the measured run's answers are returned: the warm-up signals' ids are none of
 * them, so their arrivals never count.
 */
export async function runAgentLoad(
  store: BenchStore,
  transport: BenchTransport,
  agents: number,
  sourcesPerAgent: number,
  buildSchedule: (sourceKeys: string[]) => Scheduled[],
  warmups = 0,
): Promise<AgentLoadRun | null> {
  const servers: BenchServer[] = [];
  if (store === 'sqlite') {
    servers.push(await startSignalgate({}, { nodeArgs: SERVER_NODE_ARGS }));
  } else {
    const schema = await createPostgresSchema();
    if (schema === null) return null;
    const env = { SIGNALGATE_DATABASE_URL: schema.url };
    const first = await startSignalgate(
      env,
      { nodeArgs: SERVER_NODE_ARGS },
      { cleanup: store === 'postgres' ? schema.drop : undefined },
    );
    servers.push(first);
    if (store === 'postgres-2') {
      // Started once the first has migrated; the schema goes with the last one stopped.
      servers.push(
        await startSignalgate(
          env,
          { nodeArgs: SERVER_NODE_ARGS },
          { cleanup: schema.drop, adminToken: first.adminToken },
        ),
      );
    }
  }
  const server = servers[0]!;
  if (process.env.BENCH_SHOW_PIDS) process.stderr.write(`bench: server pids ${servers.map((s) => s.pid).join(' ')}\n`);
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
    const interleaved = Array.from(
      { length: sourceKeys.length },
      (_, i) => sourceKeys[(i % agents) * sourcesPerAgent + Math.floor(i / agents)]!,
    );
    const configFile = path.join(dir, 'agents.json');
    const resultsFile = path.join(dir, 'arrivals.json');
    writeFileSync(configFile, JSON.stringify({ servers: servers.map((s) => s.url), tokens, transport, resultsFile }));
    const child = spawn(
      process.execPath,
      [...AGENTS_NODE_ARGS, ...TYPESCRIPT_NODE_ARGS, benchFile('bench-agents.ts'), configFile],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    agentsProcess = child;
    if (process.env.BENCH_SHOW_PIDS) process.stderr.write(`bench: agents pid ${child.pid}\n`);
    let held = 0;
    let acked = 0;
    let ackFailures = 0;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the ${agents} agents did not all connect by ${transport} within 60 s`)),
        60_000,
      );
      let partial = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        const lines = (partial + chunk.toString()).split('\n');
        partial = lines.pop()!;
        for (const line of lines) {
          const message = JSON.parse(line) as { ready?: number; held?: number; acked?: number; ackFailures?: number };
          if (message.held !== undefined) held = message.held;
          if (message.acked !== undefined) acked = message.acked;
          if (message.ackFailures !== undefined) ackFailures = message.ackFailures;
          if (message.ready !== undefined) {
            clearTimeout(timer);
            resolve();
          }
        }
      });
      child.once('exit', (code) => reject(new Error(`the agents process exited with ${code}`)));
    });
    const pids = () => [servers.map((s) => s.pid), [child.pid!], [process.pid]];
    const cpuOf = () => pids().map((group) => group.reduce((sum, pid) => sum + cpuMillis(pid), 0));
    const schedule = buildSchedule(interleaved);
    let acceptedBefore = 0;
    for (let round = 1; round <= warmups; round++) {
      const serverCpu = cpuOf()[0]!;
      const warm = await sendOnSchedule(
        servers.map((s) => s.url),
        schedule,
        SENDER_CONNECTIONS,
      );
      acceptedBefore += warm.answers.filter((a) => a.id !== null).length;
      const deadline = Date.now() + 60_000;
      while (held < acceptedBefore || acked + ackFailures < acceptedBefore) {
        if (Date.now() > deadline)
          throw new Error(
            `warm-up ${round}: the agents hold ${held} and acknowledged ${acked + ackFailures} of ${acceptedBefore} after 60 s`,
          );
        await sleep(100);
      }
      // The server's CPU from the round's start to its last acknowledgement (it reads /proc): the warm-up's effect, round by round.
      process.stdout.write(
        `burst ${store} ${transport}: warm-up ${round} of ${warmups}, server CPU ${cpuOf()[0]! - serverCpu} ms\n`,
      );
    }
    const heldBefore = held;
    const ackFailuresBefore = ackFailures;
    await server.adminGet('/metrics');
    const cpuBefore = cpuOf();
    const monotonicStart = process.hrtime.bigint() / 1000n;
    const { startAt, answers } = await sendOnSchedule(
      servers.map((s) => s.url),
      schedule,
      SENDER_CONNECTIONS,
    );
    const answeredAt = Date.now();
    const metrics = await server.adminGet('/metrics');
    const accepted = answers.filter((a) => a.id !== null).length;
    const deadline = Date.now() + DRAIN_MS;
    while (Date.now() < deadline && held - heldBefore < accepted) await sleep(100);
    const cpu = cpuOf().map((ms, i) => ms - cpuBefore[i]!);
    if (process.env.BENCH_SHOW_PIDS) {
      // Monotonic µs, the clock of a V8 CPU profile's samples: the window to read a profile in.
      process.stderr.write(
        `bench: CPU ms from the start to all held: server ${cpu[0]}, agents ${cpu[1]}, sender ${cpu[2]}; monotonic µs ${monotonicStart}-${process.hrtime.bigint() / 1000n}\n`,
      );
      process.stderr.write(
        `bench: schedule start ${new Date(startAt).toISOString()}, last answer ${new Date(answeredAt).toISOString()}, all held by ${new Date().toISOString()}\n`,
      );
    }
    await stopProcess(child);
    agentsProcess = null;
    const results = JSON.parse(readFileSync(resultsFile, 'utf8')) as {
      arrivals: Record<string, number>;
      carriers: Record<string, Carrier>;
      ackFailures: number;
    };
    return {
      startAt,
      answers,
      arrivals: results.arrivals,
      carriers: results.carriers,
      ackFailures: results.ackFailures - ackFailuresBefore,
      metrics,
      serverCpuMs: cpu[0]!,
    };
  } finally {
    if (agentsProcess !== null) await stopProcess(agentsProcess);
    for (const s of servers) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function provisionTenant(
  server: BenchServer,
  n: number,
  sources: number,
): Promise<{ token: string; keys: string[] }> {
  const account = await server.admin('/api/admin/accounts', { name: `tenant ${n}`, monthlySignalQuota: 1_000_000_000 });
  const agent = await server.admin(`/api/admin/accounts/${account.id}/agents`, { name: `agent ${n}` });
  const keys: string[] = [];
  for (let s = 0; s < sources; s++) {
    const source = await server.admin('/api/admin/sources', {
      accountId: account.id,
      name: `source ${n}.${s}`,
      agentIds: [agent.id],
    });
    keys.push(source.authKey);
  }
  return { token: agent.token, keys };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
