import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Placement, spawnListening, stopProcess } from './bench-process.js';
import { BENCH_PG_URL, createPostgresSchema, median, redact, startSignalgate } from './bench-server.js';
import type { LoadResult } from './load.js';
import { cpuMillis } from './process-cpu.js';
import { signalMix, type BenchRequest } from './signal-mix.js';
import { ensureWrk, onPath, runWrk } from './wrk.js';
import { benchFile } from './bench-files.js';

/**
 * `npm run bench -- --equal-cpu`: every server pinned to CPU 0 and wrk to CPU 1 with taskset, so
 * the load generator's work never counts against the server and each server gets one whole
 * core: bare node:http, signalgate on SQLite, and on PostgreSQL when reachable (the PostgreSQL
 * server itself is not pinned: it runs wherever the kernel puts it). Same mix and 50
 * connections as the default scenario; rounds alternate; medians reported. Beside throughput, each
 * server's CPU time per request answered (user and system, all its threads, from /proc): the
 * figure that other load on the machine disturbs least.
 */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SERVER_CPU = '0';
const LOAD_CPU = '1';

export interface EqualCpuRow {
  name: string;
  store: 'bare' | 'sqlite' | 'postgres';
  rps: number;
  p50: number;
  p99: number;
  ratio: number;
  /** The server process's CPU time per request answered, µs. */
  cpuUs: number;
}

export interface Target {
  name: string;
  store: EqualCpuRow['store'];
  url: string;
  pid: number;
  requests: BenchRequest[];
  stop: () => Promise<void>;
}

/** Runs the scenario; with `profileDir`, the SQLite server writes a V8 CPU profile there. */
export async function runEqualCpu(
  profileDir: string | null,
): Promise<{ rows: EqualCpuRow[]; profiledRequests: number }> {
  if (!onPath('taskset'))
    throw new Error('taskset (util-linux) is missing: the equal-CPU scenario pins processes with it');
  ensureWrk();
  const targets: Target[] = [];
  let sqliteRequests = 0;
  const results = new Map<string, LoadResult[]>();
  const cpu = new Map<string, number[]>();
  try {
    targets.push(await bareTarget());
    const sqliteNodeArgs = profileDir === null ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`];
    targets.push(
      await signalgateTarget('signalgate (SQLite)', 'sqlite', {}, { cpu: SERVER_CPU, nodeArgs: sqliteNodeArgs }),
    );
    const pgSchema = await createPostgresSchema();
    if (pgSchema !== null) {
      targets.push(
        await signalgateTarget(
          'signalgate (PostgreSQL)',
          'postgres',
          { SIGNALGATE_DATABASE_URL: pgSchema.url },
          { cpu: SERVER_CPU },
          pgSchema.drop,
        ),
      );
    } else {
      process.stdout.write(`PostgreSQL at ${redact(BENCH_PG_URL)} not reachable: no PostgreSQL row\n`);
    }
    for (const target of targets) {
      results.set(target.name, []);
      cpu.set(target.name, []);
    }
    for (const target of targets) {
      const warmUp = await runWrk(target.url, target.requests, CONNECTIONS, 2, LOAD_CPU);
      if (target.store === 'sqlite') sqliteRequests += warmUp.total;
    }
    for (let round = 1; round <= ROUNDS; round++) {
      for (const target of targets) {
        const cpuBefore = cpuMillis(target.pid);
        const result = await runWrk(target.url, target.requests, CONNECTIONS, SECONDS, LOAD_CPU);
        const cpuUs = ((cpuMillis(target.pid) - cpuBefore) * 1000) / result.total;
        cpu.get(target.name)!.push(cpuUs);
        if (result.non2xx > 0 || result.errors > 0) {
          throw new Error(
            `${target.name}: ${result.non2xx} error answers and ${result.errors} socket errors (${result.errorDetail ?? ''}); the run is not valid`,
          );
        }
        results.get(target.name)!.push(result);
        if (target.store === 'sqlite') sqliteRequests += result.total;
        process.stdout.write(
          `equal-cpu round ${round} ${target.name}: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, ${cpuUs.toFixed(0)} µs CPU per request\n`,
        );
      }
    }
  } finally {
    for (const target of targets) await target.stop();
  }
  const rows = targets.map((target) => {
    const runs = results.get(target.name)!;
    return {
      name: target.name,
      store: target.store,
      rps: median(runs.map((r) => r.requestsPerSecond)),
      p50: median(runs.map((r) => r.p50)),
      p99: median(runs.map((r) => r.p99)),
      ratio: 0,
      cpuUs: median(cpu.get(target.name)!),
    };
  });
  const bare = rows.find((row) => row.store === 'bare')!;
  for (const row of rows) row.ratio = row.rps / bare.rps;
  process.stdout.write(
    `\nequal CPU: servers on CPU ${SERVER_CPU}, wrk (1 thread) on CPU ${LOAD_CPU}; medians of ${ROUNDS} rounds × ${SECONDS} s, ${CONNECTIONS} connections, node ${process.version}\n` +
      `| server | req/s | p50 ms | p99 ms | throughput vs bare | p99 vs bare | server CPU µs per request |\n|---|---|---|---|---|---|---|\n`,
  );
  for (const row of rows) {
    process.stdout.write(
      `| ${row.name} | ${row.rps.toFixed(0)} | ${row.p50.toFixed(2)} | ${row.p99.toFixed(2)} | ${row.ratio.toFixed(2)} | ${(row.p99 / bare.p99).toFixed(1)}× | ${row.cpuUs.toFixed(0)} |\n`,
    );
  }
  return { rows, profiledRequests: sqliteRequests };
}

async function bareTarget(): Promise<Target> {
  const logDir = mkdtempSync(path.join(tmpdir(), 'signalgate-bench-bare-'));
  const proc = await spawnListening(benchFile('bare-server.ts'), [], {}, path.join(logDir, 'server.log'), {
    cpu: SERVER_CPU,
  });
  return {
    name: 'bare node:http',
    store: 'bare',
    url: proc.url,
    pid: proc.child.pid!,
    requests: signalMix('plain', 'signed', 'unused'),
    stop: async () => {
      await stopProcess(proc.child);
      rmSync(logDir, { recursive: true, force: true });
    },
  };
}

/** A signalgate server with the benchmark's account and two sources (one signed), loaded with the mix; `build` as in `startSignalgate`. */
export async function signalgateTarget(
  name: string,
  store: EqualCpuRow['store'],
  env: Record<string, string>,
  placement: Placement,
  cleanup?: () => Promise<void>,
  build?: string,
): Promise<Target> {
  const server = await startSignalgate(env, placement, { cleanup, build });
  const account = await server.admin('/api/admin/accounts', { name: 'bench', monthlySignalQuota: 1_000_000_000 });
  const plain = await server.admin('/api/admin/sources', { accountId: account.id, name: 'plain' });
  const secret = randomBytes(16).toString('hex');
  const signed = await server.admin('/api/admin/sources', {
    accountId: account.id,
    name: 'signed',
    hmacSecret: secret,
  });
  return {
    name,
    store,
    url: server.url,
    pid: server.pid,
    requests: signalMix(plain.authKey, signed.authKey, secret),
    stop: server.stop,
  };
}
