import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { LoadResult } from './load.js';
import type { BenchRequest } from './signal-mix.js';

/**
 * wrk (Debian package `wrk`) as the load generator of the equal-CPU scenario: written in C, it
 * needs about a third of autocannon's CPU per request, so one core of it can saturate a bare
 * node:http server on the other core, which autocannon on one core cannot. Installed with
 * apt-get when missing.
 */
export function ensureWrk(): void {
  if (onPath('wrk')) return;
  process.stdout.write('wrk is missing: installing the Debian package with apt-get\n');
  execFileSync('apt-get', ['install', '-y', 'wrk'], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

export function onPath(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * One wrk run of `seconds` at `connections` on one thread pinned to `cpu`, cycling through the
 * mix; the script's `done` prints the figures as one JSON line (latencies in µs).
 */
export async function runWrk(
  url: string,
  requests: BenchRequest[],
  connections: number,
  seconds: number,
  cpu: string,
): Promise<LoadResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-bench-wrk-'));
  try {
    const script = path.join(dir, 'mix.lua');
    writeFileSync(script, luaScript(requests));
    const output = await run('taskset', [
      '-c',
      cpu,
      'wrk',
      '--timeout',
      '10s',
      '-t1',
      `-c${connections}`,
      `-d${seconds}s`,
      '-s',
      script,
      url,
    ]);
    const line = output.split('\n').find((l) => l.startsWith('{"wrk"'));
    if (line === undefined) throw new Error(`wrk printed no figures:\n${output}`);
    const errorLine = output.split('\n').find((l) => l.startsWith('wrk socket errors'))!;
    const figures = JSON.parse(line) as {
      requests: number;
      durationUs: number;
      p50: number;
      p99: number;
      status: number;
      socket: number;
    };
    return {
      requestsPerSecond: figures.requests / (figures.durationUs / 1e6),
      p50: figures.p50 / 1000,
      p99: figures.p99 / 1000,
      total: figures.requests,
      non2xx: figures.status,
      errors: figures.socket,
      errorDetail: errorLine,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function luaScript(requests: BenchRequest[]): string {
  const lua = (text: string) => {
    if (!/^[\x20-\x7e]*$/.test(text)) throw new Error('the wrk mix must be printable ASCII');
    return JSON.stringify(text);
  };
  const entries = requests.map((r) => {
    const headers = Object.entries(r.headers)
      .map(([k, v]) => `[${lua(k)}] = ${lua(v)}`)
      .join(', ');
    return `wrk.format(${lua(r.method)}, ${lua(r.path)}, { ${headers} }, ${lua(r.body)})`;
  });
  return `local mix = {}
local i = 0
function init(args)
  mix = { ${entries.join(',\n    ')} }
end
function request()
  i = i % #mix + 1
  return mix[i]
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"wrk":1,"requests":%d,"durationUs":%d,"p50":%d,"p99":%d,"status":%d,"socket":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), e.status,
    e.connect + e.read + e.write + e.timeout))
  io.write(string.format('wrk socket errors: connect %d, read %d, write %d, timeout %d\\n', e.connect, e.read, e.write, e.timeout))
end
`;
}

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${command} ${args.join(' ')} exited with ${code}:\n${out}`)),
    );
  });
}
