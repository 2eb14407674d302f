import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { makeBenchCertificate, type BenchCertificate } from './bench-certificate.js';
import { spawnListening, stopProcess } from './bench-process.js';
import { BENCH_PG_URL, createPostgresSchema, median, redact, startSignalgate } from './bench-server.js';
import { runLoad, type LoadResult } from './load.js';
import { signalMix, type BenchRequest } from './signal-mix.js';
import { benchFile } from './bench-files.js';

/**
 * The default scenario of `npm run bench`: the hot path (receive, verify, parse, charge quota,
 * commit, answer) of signalgate on its durable embedded store, and on PostgreSQL when one is
 * reachable, against a bare node:http server, in one run, with the same mix and connection
 * count, all sharing the machine's cores. Rounds alternate between the servers so drift on the
 * machine hits all of them alike; medians are reported. With HTTPS it adds the bare server and
 * signalgate on SQLite served over HTTPS (a self-signed P-256 certificate). The retention
 * scenario runs signalgate on SQLite with nothing to prune (the default 90 d) beside one pruning
 * all the time (`BENCH_RETENTION`, default 5 s), and reports the store's size after each round.
 */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PRUNE_AFTER = process.env.BENCH_RETENTION ?? '5s';
const NOTHING_TO_PRUNE = 'SQLite, retention 90d (nothing to prune)';

interface Target {
  name: string;
  url: string;
  requests: BenchRequest[];
  stop: () => Promise<void>;
  /** signalgate's data directory, whose store size the retention scenario reports. */
  dataDir?: string;
}

export async function runThroughput(withHttps: boolean, retention: boolean): Promise<void> {
  const targets: Target[] = [];
  const results = new Map<string, LoadResult[]>();
  const certDir = withHttps ? mkdtempSync(path.join(tmpdir(), 'signalgate-bench-tls-')) : null;
  try {
    // Inside the try: a server that fails to start must not leave the others running.
    if (retention) {
      targets.push(
        await signalgateTarget(NOTHING_TO_PRUNE, {}),
        await signalgateTarget(`SQLite, retention ${PRUNE_AFTER} (pruning)`, { SIGNALGATE_RETENTION: PRUNE_AFTER }),
      );
    } else {
      targets.push(await bareTarget(null), await signalgateTarget('signalgate (SQLite)', {}));
    }
    if (certDir !== null) {
      const certificate = makeBenchCertificate(certDir);
      targets.push(
        await bareTarget(certificate),
        await signalgateTarget(
          'signalgate (SQLite, HTTPS)',
          { SIGNALGATE_TLS_CERT: certificate.certFile, SIGNALGATE_TLS_KEY: certificate.keyFile },
          undefined,
          certificate,
        ),
      );
    }
    // Retention: SQLite only, the size reported is the embedded store's.
    const pgSchema = retention ? null : await createPostgresSchema();
    if (retention) {
      // no PostgreSQL row
    } else if (pgSchema !== null) {
      targets.push(
        await signalgateTarget('signalgate (PostgreSQL)', { SIGNALGATE_DATABASE_URL: pgSchema.url }, pgSchema.drop),
      );
    } else {
      process.stdout.write(`PostgreSQL at ${redact(BENCH_PG_URL)} not reachable: no PostgreSQL row\n`);
    }
    for (const target of targets) results.set(target.name, []);
    for (const target of targets) await runLoad(target.url, target.requests, CONNECTIONS, 2); // warm-up
    for (let round = 1; round <= ROUNDS; round++) {
      for (const target of targets) {
        const result = await runLoad(target.url, target.requests, CONNECTIONS, SECONDS);
        if (result.non2xx > 0 || result.errors > 0) {
          throw new Error(
            `${target.name}: ${result.non2xx} non-2xx answers and ${result.errors} errors; the run is not valid`,
          );
        }
        results.get(target.name)!.push(result);
        const size = retention && target.dataDir ? `, store ${(storeBytes(target.dataDir) / 1e6).toFixed(1)} MB` : '';
        process.stdout.write(
          `round ${round} ${target.name}: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms${size}\n`,
        );
      }
    }
  } finally {
    for (const target of targets) await target.stop();
    if (certDir !== null) rmSync(certDir, { recursive: true, force: true });
  }
  report(results, retention);
}

function report(results: Map<string, LoadResult[]>, retention: boolean): void {
  const rows = [...results].map(([name, runs]) => ({
    name,
    rps: median(runs.map((r) => r.requestsPerSecond)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
  }));
  const bareOf = (name: string) =>
    rows.find(
      (row) => row.name === (retention ? NOTHING_TO_PRUNE : /https/i.test(name) ? 'bare node:https' : 'bare node:http'),
    )!;
  process.stdout.write(
    `\nmedians of ${ROUNDS} rounds × ${SECONDS} s, ${CONNECTIONS} connections, node ${process.version}\n` +
      `| server | req/s | p50 ms | p99 ms | throughput vs ${retention ? 'nothing to prune' : 'bare (same transport)'} |\n|---|---|---|---|---|\n`,
  );
  for (const row of rows) {
    process.stdout.write(
      `| ${row.name} | ${row.rps.toFixed(0)} | ${row.p50} | ${row.p99} | ${(row.rps / bareOf(row.name).rps).toFixed(2)} |\n`,
    );
  }
}

async function bareTarget(certificate: BenchCertificate | null): Promise<Target> {
  const logDir = mkdtempSync(path.join(tmpdir(), 'signalgate-bench-bare-'));
  const env: Record<string, string> =
    certificate === null ? {} : { BENCH_TLS_CERT: certificate.certFile, BENCH_TLS_KEY: certificate.keyFile };
  const proc = await spawnListening(benchFile('bare-server.ts'), [], env, path.join(logDir, 'server.log'));
  return {
    name: certificate === null ? 'bare node:http' : 'bare node:https',
    url: proc.url,
    requests: signalMix('plain', 'signed', 'unused'),
    stop: async () => {
      await stopProcess(proc.child);
      rmSync(logDir, { recursive: true, force: true });
    },
  };
}

async function signalgateTarget(
  name: string,
  env: Record<string, string>,
  cleanup?: () => Promise<void>,
  certificate?: BenchCertificate,
): Promise<Target> {
  const server = await startSignalgate(env, {}, { ca: certificate?.pem, cleanup });
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
    url: server.url,
    requests: signalMix(plain.authKey, signed.authKey, secret),
    stop: server.stop,
    dataDir: server.dataDir,
  };
}

/** The bytes of the SQLite store's files (the database, its WAL and shared memory), not the log. */
function storeBytes(dataDir: string): number {
  return readdirSync(dataDir)
    .filter((name) => name.startsWith('signalgate.db'))
    .reduce((sum, name) => sum + statSync(path.join(dataDir, name)).size, 0);
}
