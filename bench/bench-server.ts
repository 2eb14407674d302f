import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { type Placement, spawnListening, stopProcess } from './bench-process.js';
import { CountingHttpConnection } from './counting-http-connection.js';
import { BUILT_CLI } from './bench-files.js';

export const BENCH_PG_URL = process.env.SIGNALGATE_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A `signalgate serve` process on a fresh data directory, with an admin token of its own. */
export interface BenchServer {
  url: string;
  dataDir: string;
  /** The server process's id (its memory is read from /proc; strace or perf beside a run). */
  pid: number;
  adminToken: string;
  /** An admin POST that must answer 201. */
  admin: <T = { id: string; authKey: string; token: string }>(urlPath: string, body: unknown) => Promise<T>;
  /** An admin GET's body; it must answer 200. */
  adminGet: (urlPath: string) => Promise<string>;
  /**
   * An admin GET that must answer 200, for timing: on one kept-alive connection, its body's bytes
   * counted, not collected or decoded. Decoding a 500-entry page into a string took this process
   * about 2 ms and garbage collections of its own, which `adminGet`'s times counted as the server's;
   * over plain HTTP the bytes are read into one buffer and never kept (`CountingHttpConnection`).
   */
  adminGetBytes: (urlPath: string) => Promise<number>;
  stop: () => Promise<void>;
}

export async function startSignalgate(
  env: Record<string, string>,
  placement: Placement = {},
  options: {
    ca?: string;
    cleanup?: () => Promise<void>;
    dataDir?: string;
    adminToken?: string;
    /** Another build's directory (a checkout with its dist/ built) to serve from, instead of this one. */
    build?: string;
  } = {},
): Promise<BenchServer> {
  // Instances on one database share one admin token.
  const adminToken = options.adminToken ?? randomBytes(32).toString('base64url');
  // A data directory given is kept (the big-log benchmark's cached store); a fresh one goes.
  const dataDir = options.dataDir ?? mkdtempSync(path.join(tmpdir(), 'signalgate-bench-'));
  // The listening line is looked for in the log: an earlier run's must not be found.
  rmSync(path.join(dataDir, 'server.log'), { force: true });
  // The log sits beside the data, as an operator's would, and goes with it.
  const proc = await spawnListening(
    options.build === undefined ? BUILT_CLI : path.join(options.build, 'dist', 'cli', 'main.js'),
    ['serve'],
    { SIGNALGATE_DATA_DIR: dataDir, SIGNALGATE_ADMIN_TOKEN: adminToken, ...env },
    path.join(dataDir, 'server.log'),
    placement,
  );
  let counting: CountingHttpConnection | null = null;
  const keptAlive = proc.url.startsWith('https:')
    ? new https.Agent({ keepAlive: true, maxSockets: 1, ca: options.ca })
    : new http.Agent({ keepAlive: true, maxSockets: 1 });
  return {
    url: proc.url,
    dataDir,
    pid: proc.child.pid!,
    adminToken,
    admin: async <T>(urlPath: string, body: unknown) => {
      const res = await postJson(proc.url + urlPath, adminToken, body, options.ca);
      if (res.status !== 201) throw new Error(`${urlPath}: ${res.status} ${res.text}`);
      return JSON.parse(res.text) as T;
    },
    adminGet: async (urlPath: string) => {
      const res = await fetch(proc.url + urlPath, { headers: { authorization: `Bearer ${adminToken}` } });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`${urlPath}: ${res.status} ${text}`);
      return text;
    },
    adminGetBytes: async (urlPath: string) => {
      if (proc.url.startsWith('https:')) return getBytes(proc.url + urlPath, adminToken, keptAlive);
      if (counting === null || !counting.alive) counting = await CountingHttpConnection.open(proc.url);
      return counting.get(urlPath, adminToken);
    },
    stop: async () => {
      keptAlive.destroy();
      counting?.close();
      await stopProcess(proc.child);
      // BENCH_KEEP_LOGS=DIR keeps each server's log there (a run's errors can be read after it).
      const keep = process.env.BENCH_KEEP_LOGS;
      if (keep !== undefined && keep !== '') {
        mkdirSync(keep, { recursive: true });
        copyFileSync(path.join(dataDir, 'server.log'), path.join(keep, `server-${proc.child.pid}.log`));
      }
      if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
      await options.cleanup?.();
    },
  };
}

/** An admin POST; over HTTPS it trusts the benchmark's own certificate (`ca`), which fetch cannot be told to. */
function postJson(
  url: string,
  token: string,
  body: unknown,
  ca: string | undefined,
): Promise<{ status: number; text: string }> {
  const client = url.startsWith('https:') ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ca },
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

/**
 * A GET through node's http client whose body is counted chunk by chunk; an answer other than
 * 200 fails with its text. Exported for the script that compares the benchmark's clients.
 */
export function getBytes(url: string, token: string, agent: http.Agent): Promise<number> {
  const client = url.startsWith('https:') ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.get(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let bytes = 0;
      const refusal: Buffer[] = [];
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (res.statusCode !== 200) refusal.push(chunk);
      });
      res.on('end', () => {
        if (res.statusCode === 200) resolve(bytes);
        else reject(new Error(`${url}: ${res.statusCode} ${Buffer.concat(refusal).toString('utf8')}`));
      });
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** A fresh schema on the benchmark's PostgreSQL, or null when none is reachable. */
export async function createPostgresSchema(): Promise<{ url: string; drop: () => Promise<void> } | null> {
  const schema = `bench_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: BENCH_PG_URL });
  try {
    await client.connect();
    await client.query(`CREATE SCHEMA ${schema}`);
  } catch {
    await client.end().catch(() => undefined);
    return null;
  }
  await client.end();
  const url = new URL(BENCH_PG_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    drop: async () => {
      // BENCH_KEEP_SCHEMA=1 leaves the schema for reading after the run: its pg_stat_user_tables
      // counters include the last second of the run, which sampling during the run misses.
      if (process.env.BENCH_KEEP_SCHEMA === '1') {
        process.stderr.write(`bench: kept schema ${schema}; drop with: DROP SCHEMA ${schema} CASCADE\n`);
        return;
      }
      const c = new pg.Client({ connectionString: BENCH_PG_URL });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    },
  };
}

export function redact(url: string): string {
  return url.replace(/\/\/[^@]*@/, '//');
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The p-th quantile (0..1) of ascending values, nearest rank. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}
