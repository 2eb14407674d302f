import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { median, startSignalgate } from './bench-server.js';
import { runLoad, type LoadResult } from './load.js';
import { signalMix } from './signal-mix.js';

/**
 * `npm run bench -- --slow-clients`: the normal load on signalgate (SQLite), alone and beside
 * SLOW_CONNECTIONS connections that each send a request one byte a second (a slow-loris
 * client), in alternating rounds on one server. A slow connection the server cuts (its header
 * timeout) is opened again at once, so there are always that many. What it shows: whether slow
 * clients stop other callers being answered, in req/s and latency of the normal load.
 */
const SLOW_CONNECTIONS = Number(process.env.BENCH_SLOW_CONNECTIONS ?? 200);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

export interface SlowClientsRow {
  condition: string;
  rps: number;
  p50: number;
  p99: number;
  /** Slow connections the server closed during the rounds (by its timeouts). */
  cut: number;
}

/** SLOW_CONNECTIONS connections dripping one byte a second each, reopened when closed. */
function startSlowClients(url: string, authKey: string): { stop: () => number } {
  const { hostname, port } = new URL(url);
  const request = Buffer.from(
    `POST /api/inbound/${authKey} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nEURUSD,buy`,
  );
  let stopped = false;
  let cut = 0;
  const sockets = new Set<net.Socket>();
  const open = () => {
    if (stopped) return;
    const socket = net.connect(Number(port), hostname);
    sockets.add(socket);
    let sent = 0;
    const drip = setInterval(() => {
      if (sent < request.length) socket.write(request.subarray(sent, ++sent));
    }, 1000);
    socket.on('error', () => undefined);
    socket.on('data', () => undefined);
    socket.on('close', () => {
      clearInterval(drip);
      sockets.delete(socket);
      if (stopped) return;
      cut++;
      setTimeout(open, 10);
    });
  };
  for (let i = 0; i < SLOW_CONNECTIONS; i++) open();
  return {
    stop: () => {
      stopped = true;
      for (const socket of sockets) socket.destroy();
      return cut;
    },
  };
}

export async function runSlowClients(): Promise<SlowClientsRow[]> {
  const server = await startSignalgate({});
  const quiet: LoadResult[] = [];
  const slow: LoadResult[] = [];
  let cut = 0;
  try {
    const account = await server.admin('/api/admin/accounts', { name: 'bench', monthlySignalQuota: 1_000_000_000 });
    const plain = await server.admin('/api/admin/sources', { accountId: account.id, name: 'plain' });
    const secret = randomBytes(16).toString('hex');
    const signed = await server.admin('/api/admin/sources', {
      accountId: account.id,
      name: 'signed',
      hmacSecret: secret,
    });
    const requests = signalMix(plain.authKey, signed.authKey, secret);
    await runLoad(server.url, requests, CONNECTIONS, 2); // warm-up
    const check = (name: string, result: LoadResult) => {
      if (result.non2xx > 0 || result.errors > 0)
        throw new Error(`${name}: ${result.non2xx} non-2xx answers and ${result.errors} errors; the run is not valid`);
      process.stdout.write(
        `${name}: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms\n`,
      );
      return result;
    };
    for (let round = 1; round <= ROUNDS; round++) {
      quiet.push(check(`round ${round} no slow clients`, await runLoad(server.url, requests, CONNECTIONS, SECONDS)));
      const clients = startSlowClients(server.url, plain.authKey);
      // Let them all connect and start dripping before the load starts.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      try {
        slow.push(
          check(
            `round ${round} with ${SLOW_CONNECTIONS} slow clients`,
            await runLoad(server.url, requests, CONNECTIONS, SECONDS),
          ),
        );
      } finally {
        cut += clients.stop();
      }
    }
  } finally {
    await server.stop();
  }
  const row = (condition: string, runs: LoadResult[], cutCount: number): SlowClientsRow => ({
    condition,
    rps: median(runs.map((r) => r.requestsPerSecond)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    cut: cutCount,
  });
  const rows = [
    row('no slow clients', quiet, 0),
    row(`${SLOW_CONNECTIONS} connections sending one byte a second`, slow, cut),
  ];
  process.stdout.write(
    `\nslow clients: signalgate (SQLite), medians of ${ROUNDS} rounds × ${SECONDS} s, ${CONNECTIONS} connections of normal load, node ${process.version}\n` +
      '| condition | req/s | p50 ms | p99 ms | req/s vs none | slow connections cut by the server |\n|---|---|---|---|---|---|\n',
  );
  for (const r of rows) {
    process.stdout.write(
      `| ${r.condition} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${(r.rps / rows[0]!.rps).toFixed(2)} | ${r.condition === 'no slow clients' ? '–' : r.cut} |\n`,
    );
  }
  return rows;
}
