import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { makeBenchCertificate, type BenchCertificate } from './bench-certificate.js';
import { spawnListening, stopProcess } from './bench-process.js';
import { runLoad, type LoadResult } from './load.js';
import { signalMix, type BenchRequest } from './signal-mix.js';

/**
 * `npm run bench`: the hot path (receive, verify, parse, charge quota, commit, answer) of
 * signalgate on its durable embedded store, and on PostgreSQL when one is reachable, against a
 * bare node:http server, in one run, with the same mix and connection count. Rounds alternate
 * between the servers so drift on the machine hits all of them alike; medians are reported.
 * `--https` adds the bare server and signalgate on SQLite served over HTTPS (a self-signed
 * P-256 certificate), beside their plain HTTP rows.
 */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PG_URL = process.env.SIGNALGATE_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ADMIN = `bench-${randomBytes(8).toString('hex')}`;
const here = path.dirname(fileURLToPath(import.meta.url));
const FLAGS = ['--https'];
const unknownFlag = process.argv.slice(2).find((arg) => !FLAGS.includes(arg));
if (unknownFlag !== undefined) {
  process.stderr.write(`bench: unknown argument '${unknownFlag}'; the one flag is --https (adds HTTPS rows beside plain HTTP)\n`);
  process.exit(2);
}
const WITH_HTTPS = process.argv.includes('--https');

interface Target {
  name: string;
  url: string;
  requests: BenchRequest[];
  stop: () => Promise<void>;
}

async function main(): Promise<void> {
  const targets: Target[] = [];
  const results = new Map<string, LoadResult[]>();
  const certDir = WITH_HTTPS ? mkdtempSync(path.join(tmpdir(), 'signalgate-bench-tls-')) : null;
  try {
    // Inside the try: a server that fails to start must not leave the others running.
    targets.push(await bareTarget(null), await signalgateTarget('signalgate (SQLite)', {}));
    if (certDir !== null) {
      const certificate = makeBenchCertificate(certDir);
      targets.push(
        await bareTarget(certificate),
        await signalgateTarget('signalgate (SQLite, HTTPS)', { SIGNALGATE_TLS_CERT: certificate.certFile, SIGNALGATE_TLS_KEY: certificate.keyFile }, undefined, certificate),
      );
    }
    const pgSchema = await createPostgresSchema();
    if (pgSchema !== null) {
      targets.push(await signalgateTarget('signalgate (PostgreSQL)', { SIGNALGATE_DATABASE_URL: pgSchema.url }, pgSchema.drop));
    } else {
      process.stdout.write(`PostgreSQL at ${redact(PG_URL)} not reachable: no PostgreSQL row\n`);
    }
    for (const target of targets) results.set(target.name, []);
    for (const target of targets) await runLoad(target.url, target.requests, CONNECTIONS, 2); // warm-up
    for (let round = 1; round <= ROUNDS; round++) {
      for (const target of targets) {
        const result = await runLoad(target.url, target.requests, CONNECTIONS, SECONDS);
        if (result.non2xx > 0 || result.errors > 0) {
          throw new Error(`${target.name}: ${result.non2xx} non-2xx answers and ${result.errors} errors; the run is not valid`);
        }
        results.get(target.name)!.push(result);
        process.stdout.write(
          `round ${round} ${target.name}: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms\n`,
        );
      }
    }
  } finally {
    for (const target of targets) await target.stop();
    if (certDir !== null) rmSync(certDir, { recursive: true, force: true });
  }
  report(results);
}

function report(results: Map<string, LoadResult[]>): void {
  const rows = [...results].map(([name, runs]) => ({
    name,
    rps: median(runs.map((r) => r.requestsPerSecond)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
  }));
  const bareOf = (name: string) => rows.find((row) => row.name === (/https/i.test(name) ? 'bare node:https' : 'bare node:http'))!;
  process.stdout.write(
    `\nmedians of ${ROUNDS} rounds × ${SECONDS} s, ${CONNECTIONS} connections, node ${process.version}\n` +
      `| server | req/s | p50 ms | p99 ms | throughput vs bare (same transport) |\n|---|---|---|---|---|\n`,
  );
  for (const row of rows) {
    process.stdout.write(
      `| ${row.name} | ${row.rps.toFixed(0)} | ${row.p50} | ${row.p99} | ${(row.rps / bareOf(row.name).rps).toFixed(2)} |\n`,
    );
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function bareTarget(certificate: BenchCertificate | null): Promise<Target> {
  const logDir = mkdtempSync(path.join(tmpdir(), 'signalgate-bench-bare-'));
  const env: Record<string, string> = certificate === null ? {} : { BENCH_TLS_CERT: certificate.certFile, BENCH_TLS_KEY: certificate.keyFile };
  const proc = await spawnListening(path.join(here, 'bare-server.js'), [], env, path.join(logDir, 'server.log'));
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
  const dataDir = mkdtempSync(path.join(tmpdir(), 'signalgate-bench-'));
  // The log sits beside the data, as an operator's would, and goes with it.
  const proc = await spawnListening(
    path.join(here, '..', 'cli', 'main.js'),
    ['serve'],
    { SIGNALGATE_DATA_DIR: dataDir, SIGNALGATE_ADMIN_TOKEN: ADMIN, ...env },
    path.join(dataDir, 'server.log'),
  );
  const admin = async (urlPath: string, body: unknown) => {
    const res = await postJson(proc.url + urlPath, body, certificate?.pem);
    if (res.status !== 201) throw new Error(`${urlPath}: ${res.status} ${res.text}`);
    return JSON.parse(res.text) as { id: string; authKey: string };
  };
  const account = await admin('/api/admin/accounts', { name: 'bench', monthlySignalQuota: 1_000_000_000 });
  const plain = await admin('/api/admin/sources', { accountId: account.id, name: 'plain' });
  const secret = randomBytes(16).toString('hex');
  const signed = await admin('/api/admin/sources', { accountId: account.id, name: 'signed', hmacSecret: secret });
  return {
    name,
    url: proc.url,
    requests: signalMix(plain.authKey, signed.authKey, secret),
    stop: async () => {
      await stopProcess(proc.child);
      rmSync(dataDir, { recursive: true, force: true });
      await cleanup?.();
    },
  };
}

/** An admin POST; over HTTPS it trusts the benchmark's own certificate (`ca`), which fetch cannot be told to. */
function postJson(url: string, body: unknown, ca: string | undefined): Promise<{ status: number; text: string }> {
  const client = url.startsWith('https:') ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, ca },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

async function createPostgresSchema(): Promise<{ url: string; drop: () => Promise<void> } | null> {
  const schema = `bench_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: PG_URL });
  try {
    await client.connect();
    await client.query(`CREATE SCHEMA ${schema}`);
  } catch {
    await client.end().catch(() => undefined);
    return null;
  }
  await client.end();
  const url = new URL(PG_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    },
  };
}

function redact(url: string): string {
  return url.replace(/\/\/[^@]*@/, '//');
}

await main();
