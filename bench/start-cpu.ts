import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { median } from './bench-server.js';
import { loadAverage } from './load-average.js';
import { cpuMillis } from './process-cpu.js';

/**
 * `npm run bench -- --start-cpu`: the CPU a start costs, the figure the test run pays hundreds
 * of times and a user at every restart: `serve` on a new SQLite data directory until it logs
 * `listening`, a paper agent until `connected`, and the loading of the ccxt and FIX venues (what
 * a ccxt or FIX agent loads on top of a paper one). With `BENCH_AB_BUILD` (a checkout with its
 * dist/ built), the same of that build, the two alternating by round. User and system time of
 * the process, all threads, from /proc; medians of `BENCH_ROUNDS` rounds (default 6).
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);

interface Build {
  name: string;
  cli: string;
  dist: string;
}

async function cpuUntil(args: string[], env: Record<string, string>, line: RegExp): Promise<number> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  try {
    return await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${line} from ${args.join(' ')} in 30 s:\n${out}`)), 30_000);
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (line.test(out)) {
          clearTimeout(timer);
          resolve(cpuMillis(child.pid!));
        }
      });
      child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited (${code}) before ${line}:\n${out}`)));
    });
  } finally {
    const exited = new Promise((resolve) => child.once('close', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}

/** CPU of a process that loads `module` and exits. */
function cpuToLoad(module: string): number {
  const script = `await import(${JSON.stringify(module)}); const c = process.cpuUsage(); console.log((c.user + c.system) / 1000);`;
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim());
}

async function round(build: Build): Promise<Map<string, number>> {
  const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-bench-start-'));
  const agentDir = mkdtempSync(path.join(tmpdir(), 'signalgate-bench-start-agent-'));
  try {
    const env = { SIGNALGATE_DATA_DIR: dir, HOST: '127.0.0.1', PORT: '0', SIGNALGATE_LOG_LEVEL: 'info' };
    const figures = new Map<string, number>();
    const serve = spawn(process.execPath, [build.cli, 'serve'], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      serve.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const listening = /"url":"([^"]+)"[^\n]*"msg":"listening"/.exec(out);
        if (listening) resolve(listening[1]!);
      });
      serve.on('exit', (code) => reject(new Error(`serve exited (${code}):\n${out}`)));
    });
    figures.set('serve until listening', cpuMillis(serve.pid!));
    try {
      const admin = (args: string[]) =>
        JSON.parse(
          execFileSync(process.execPath, [build.cli, ...args], {
            env: { ...process.env, ...env },
            stdio: ['ignore', 'pipe', 'ignore'],
          }).toString(),
        );
      const account = admin(['accounts', 'create', '--name', 'bench', '--quota', '1000']) as { id: string };
      const agent = admin(['agents', 'create', '--account', account.id, '--name', 'bench']) as { token: string };
      figures.set(
        'paper agent until connected',
        await cpuUntil(
          [build.cli, 'agent', '--server', url, '--paper'],
          { SIGNALGATE_DATA_DIR: agentDir, SIGNALGATE_AGENT_TOKEN: agent.token, SIGNALGATE_LOG_LEVEL: 'info' },
          /"msg":"connected"/,
        ),
      );
    } finally {
      const exited = new Promise((resolve) => serve.once('close', resolve));
      serve.kill('SIGTERM');
      await exited;
    }
    figures.set('load the ccxt venue', cpuToLoad(path.join(build.dist, 'agent/venues/ccxt/ccxt-venue.js')));
    figures.set('load the FIX venue', cpuToLoad(path.join(build.dist, 'agent/venues/fix/fix-venue.js')));
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(agentDir, { recursive: true, force: true });
  }
}

export async function runStartCpu(): Promise<Map<string, number>> {
  const builds: Build[] = [{ name: 'this build', cli: path.resolve('dist/cli/main.js'), dist: path.resolve('dist') }];
  const other = process.env.BENCH_AB_BUILD;
  if (other !== undefined && other !== '')
    builds.push({ name: other, cli: path.resolve(other, 'dist/cli/main.js'), dist: path.resolve(other, 'dist') });
  const samples = new Map<string, Map<string, number[]>>(builds.map((b) => [b.name, new Map()]));
  for (let r = 1; r <= ROUNDS; r++) {
    for (const build of r % 2 === 1 ? builds : [...builds].reverse()) {
      for (const [what, ms] of await round(build)) {
        const list = samples.get(build.name)!.get(what) ?? [];
        list.push(ms);
        samples.get(build.name)!.set(what, list);
      }
    }
    process.stdout.write(`start-cpu: round ${r} of ${ROUNDS} done, load ${loadAverage()}\n`);
  }
  const mine = samples.get('this build')!;
  process.stdout.write(`\nCPU ms per start, median of ${ROUNDS} (user + system, all threads)\n`);
  process.stdout.write(
    `| start | ${builds.map((b) => b.name).join(' | ')} |\n|---|${builds.map(() => '---|').join('')}\n`,
  );
  for (const what of mine.keys())
    process.stdout.write(
      `| ${what} | ${builds.map((b) => median(samples.get(b.name)!.get(what)!).toFixed(0)).join(' | ')} |\n`,
    );
  return new Map([...mine].map(([what, list]) => [`start ${what} ms`, median(list)]));
}
