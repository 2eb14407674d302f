import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import pg from 'pg';
import { BENCH_PG_URL } from './bench-server.js';
import { cpuMillis } from './process-cpu.js';

/**
 * The PostgreSQL backends serving one server process, and the CPU they use: the server's
 * sockets to port 5432 (from /proc), matched by client port in `pg_stat_activity`. The store's
 * work on PostgreSQL runs there, not in node, so a change that moves work into the database
 * shows here. Linux, and a database on this machine.
 */
export class PostgresBackends {
  private readonly client = new pg.Client({ connectionString: BENCH_PG_URL });
  private readonly connected = this.client.connect();

  constructor(private readonly serverPid: number) {}

  /** CPU ms of each backend serving the server now. */
  async cpu(): Promise<Map<number, number>> {
    await this.connected;
    const ports = databasePorts(this.serverPid);
    const { rows } = await this.client.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE client_port = ANY($1::int[])',
      [ports],
    );
    const cpu = new Map<number, number>();
    for (const { pid } of rows) {
      try {
        cpu.set(pid, cpuMillis(pid));
      } catch {
        // Gone since the query.
      }
    }
    return cpu;
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => undefined);
  }
}

/**
 * CPU ms the backends used between two readings: a backend opened since `before` counts in
 * full; one closed since is missed (the pool keeps connections 10 s idle, longer than a gap).
 */
export function backendMillis(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

/** Local ports of the process's TCP connections to port 5432. */
function databasePorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match !== null) inodes.add(match[1]!);
    } catch {
      // Closed meanwhile.
    }
  }
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || !inodes.has(fields[9]!)) continue;
      const [, local] = fields[1]!.split(':');
      const [, remote] = fields[2]!.split(':');
      if (parseInt(remote!, 16) === 5432) ports.push(parseInt(local!, 16));
    }
  }
  return ports;
}
