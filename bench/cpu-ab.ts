import { BENCH_PG_URL, createPostgresSchema, median, redact } from './bench-server.js';
import { signalgateTarget, type Target } from './equal-cpu.js';
import { loadAverage } from './load-average.js';
import { cpuMillis } from './process-cpu.js';
import { backendMillis, PostgresBackends } from './postgres-backends.js';
import { ensureWrk, onPath, runWrk } from './wrk.js';

/**
 * `npm run bench -- --cpu-ab`: the server CPU time per request of this build against another
 * (`BENCH_AB_BUILD`, a checkout with its dist/ built, say main's), the figure that a loaded
 * machine disturbs least. Both servers run at once, each pinned to CPU 0 (so on one core, as in
 * `--equal-cpu`), on the store `BENCH_AB_STORE` (sqlite, the default, or postgres); `wrk` on
 * CPU 1 loads one, then the other, with the `--equal-cpu` mix, the build that goes first
 * alternating by round. Per round: user and system time of the server process from /proc over
 * the requests it answered, and the load average; then each build's median, how many rounds
 * this build was the lower, and the median of the rounds' differences. On PostgreSQL, the same
 * for the database backends serving each server (`PostgresBackends`), where the store's work runs.
 */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const STORE = (process.env.BENCH_AB_STORE ?? 'sqlite') as 'sqlite' | 'postgres';

export async function runCpuAb(): Promise<void> {
  const other = process.env.BENCH_AB_BUILD;
  if (other === undefined || other === '')
    throw new Error(
      '--cpu-ab compares with another build: set BENCH_AB_BUILD to its directory (a checkout with dist/ built)',
    );
  if (STORE !== 'sqlite' && STORE !== 'postgres')
    throw new Error(`BENCH_AB_STORE is sqlite or postgres, not '${STORE}'`);
  if (!onPath('taskset')) throw new Error('taskset (util-linux) is missing: the A/B pins processes with it');
  ensureWrk();
  const targets: Target[] = [];
  const cpu = new Map<string, number[]>();
  const backendCpu = new Map<string, number[]>();
  const backends = new Map<string, PostgresBackends>();
  try {
    for (const [name, build] of [
      [`other (${other})`, other],
      ['this build', undefined],
    ] as const) {
      let env: Record<string, string> = {};
      let drop: (() => Promise<void>) | undefined;
      if (STORE === 'postgres') {
        const schema = await createPostgresSchema();
        if (schema === null) throw new Error(`PostgreSQL at ${redact(BENCH_PG_URL)} is not reachable`);
        env = { SIGNALGATE_DATABASE_URL: schema.url };
        drop = schema.drop;
      }
      targets.push(await signalgateTarget(name, STORE, env, { cpu: '0' }, drop, build));
      cpu.set(name, []);
      backendCpu.set(name, []);
      if (STORE === 'postgres') backends.set(name, new PostgresBackends(targets.at(-1)!.pid));
    }
    // A warm-up as long as a round: a build still compiling its hot path would lose the first round.
    for (const target of targets) await runWrk(target.url, target.requests, CONNECTIONS, Math.max(2, SECONDS), '1');
    for (let round = 1; round <= ROUNDS; round++) {
      const order = round % 2 === 1 ? targets : [...targets].reverse();
      const parts: string[] = [];
      for (const target of order) {
        const database = backends.get(target.name);
        const databaseBefore = await database?.cpu();
        const before = cpuMillis(target.pid);
        const result = await runWrk(target.url, target.requests, CONNECTIONS, SECONDS, '1');
        if (result.non2xx > 0 || result.errors > 0)
          throw new Error(
            `${target.name}: ${result.non2xx} error answers and ${result.errors} socket errors; the run is not valid`,
          );
        const us = ((cpuMillis(target.pid) - before) * 1000) / result.total;
        cpu.get(target.name)!.push(us);
        let databasePart = '';
        if (database !== undefined && databaseBefore !== undefined) {
          const databaseUs = (backendMillis(databaseBefore, await database.cpu()) * 1000) / result.total;
          backendCpu.get(target.name)!.push(databaseUs);
          databasePart = `, backends ${databaseUs.toFixed(1)} µs`;
        }
        parts.push(`${target.name} ${us.toFixed(1)} µs${databasePart} (${result.requestsPerSecond.toFixed(0)} req/s)`);
      }
      process.stdout.write(`cpu-ab round ${round}: ${parts.join(', ')}; load average ${loadAverage()}\n`);
    }
  } finally {
    for (const database of backends.values()) await database.close();
    for (const target of targets) await target.stop();
  }
  const [before, after] = targets.map((target) => cpu.get(target.name)!) as [number[], number[]];
  const lower = after.filter((us, i) => us < before[i]!).length;
  process.stdout.write(
    `\nserver CPU µs per request on ${STORE}, ${ROUNDS} rounds × ${SECONDS} s, ${CONNECTIONS} connections, servers on CPU 0, wrk on CPU 1\n` +
      `| build | median | lower in | median of the rounds' differences (other − this) |\n|---|---|---|---|\n` +
      `| ${targets[0]!.name} | ${median(before).toFixed(1)} | ${ROUNDS - lower} | |\n` +
      `| ${targets[1]!.name} | ${median(after).toFixed(1)} | ${lower} | ${median(before.map((us, i) => us - after[i]!)).toFixed(1)} |\n`,
  );
  if (STORE !== 'postgres') return;
  const [databaseBefore, databaseAfter] = targets.map((target) => backendCpu.get(target.name)!) as [number[], number[]];
  const databaseLower = databaseAfter.filter((us, i) => us < databaseBefore[i]!).length;
  process.stdout.write(
    `\nPostgreSQL backends' CPU µs per request (the connections of each server, from pg_stat_activity and /proc)\n` +
      `| build | median | lower in | median of the rounds' differences (other − this) |\n|---|---|---|---|\n` +
      `| ${targets[0]!.name} | ${median(databaseBefore).toFixed(1)} | ${ROUNDS - databaseLower} | |\n` +
      `| ${targets[1]!.name} | ${median(databaseAfter).toFixed(1)} | ${databaseLower} | ${median(databaseBefore.map((us, i) => us - databaseAfter[i]!)).toFixed(1)} |\n`,
  );
}
