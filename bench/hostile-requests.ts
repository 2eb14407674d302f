import http from 'node:http';
import { startSignalgate } from './bench-server.js';
import { cpuMillis } from './process-cpu.js';

/**
 * `npm run bench -- --hostile`: what a request with a valid source key costs the server when it
 * is built to be expensive (16 KB of unknown parameters, answered and logged as a refusal; a body
 * over the 16 KiB limit) against an ordinary signal: the server's CPU per request (from /proc,
 * all its threads), the bytes of the answer, and the bytes of the signal log entry it kept (as
 * the admin API shows it). On the embedded store, one request at a time on one connection.
 */
export interface HostileRow {
  kind: string;
  requests: number;
  cpuMsPerRequest: number;
  answerBytes: number;
  storedBytes: number;
}

const REQUESTS = 300;

function unknownParameters(): string {
  const names: string[] = [];
  for (let i = 0; `EURUSD,buy,${names.join(',')}`.length < 16_000; i++) names.push(`zz${i}=1`);
  return `EURUSD,buy,${names.join(',')}`;
}

const KINDS: Array<{ kind: string; body: string }> = [
  { kind: 'ordinary signal', body: 'EURUSD,buy,vol=0.1,sl_pips=20,tp_pips=40' },
  { kind: '16 KB of unknown parameters', body: unknownParameters() },
  { kind: 'body over 16 KiB', body: `EURUSD,buy,comment=${'x'.repeat(20_000)}` },
];

export async function runHostileRequests(): Promise<HostileRow[]> {
  const server = await startSignalgate({});
  const rows: HostileRow[] = [];
  try {
    const account = await server.admin('/api/admin/accounts', { name: 'hostile', monthlySignalQuota: 100_000_000 });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (const { kind, body } of KINDS) {
        const source = await server.admin('/api/admin/sources', { accountId: account.id, name: kind });
        let answerBytes = 0;
        const before = cpuMillis(server.pid);
        for (let i = 0; i < REQUESTS; i++)
          answerBytes += await post(`${server.url}/api/inbound/${source.authKey}`, body, agent);
        const cpu = cpuMillis(server.pid) - before;
        const page = JSON.parse(await server.adminGet(`/api/admin/signals?sourceId=${source.id}&limit=500`)) as {
          signals: unknown[];
        };
        const stored = page.signals.reduce<number>((sum, entry) => sum + Buffer.byteLength(JSON.stringify(entry)), 0);
        rows.push({
          kind,
          requests: REQUESTS,
          cpuMsPerRequest: cpu / REQUESTS,
          answerBytes: answerBytes / REQUESTS,
          storedBytes: stored / page.signals.length,
        });
      }
    } finally {
      agent.destroy();
    }
  } finally {
    await server.stop();
  }
  const ordinary = rows[0]!;
  process.stdout.write(
    '\nhostile requests (SQLite, one at a time): server CPU and bytes per request, against an ordinary signal\n',
  );
  process.stdout.write(
    '| request | CPU ms | × ordinary | answer bytes | stored bytes | × ordinary |\n|---|---|---|---|---|---|\n',
  );
  for (const row of rows) {
    process.stdout.write(
      `| ${row.kind} | ${row.cpuMsPerRequest.toFixed(3)} | ${(row.cpuMsPerRequest / ordinary.cpuMsPerRequest).toFixed(1)} | ` +
        `${Math.round(row.answerBytes)} | ${Math.round(row.storedBytes)} | ${(row.storedBytes / ordinary.storedBytes).toFixed(1)} |\n`,
    );
  }
  return rows;
}

/** POSTs `body` and answers how many bytes the answer's body had; a closed connection is opened again. */
function post(url: string, body: string, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'text/plain' } }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => resolve(bytes));
    });
    req.on('error', reject);
    req.end(body);
  });
}
