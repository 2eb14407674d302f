import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Reads the V8 CPU profiles (`node --cpu-prof`) one server wrote, one per thread, and prints
 * where its time went: self time per function, and grouped by stage of the hot path, in µs per
 * request served.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const STAGES: Array<[string, (fn: string, url: string) => boolean]> = [
  ['idle', (fn) => fn === '(idle)'],
  ['GC', (fn) => fn === '(garbage collector)'],
  ['HMAC', (fn, url) => /signature|hmac/i.test(url + fn) || /node:internal\/crypto/.test(url)],
  ['language (parse, validate)', (_fn, url) => /\/language\//.test(url)],
  ['logging', (_fn, url) => /\/logging\/|pino|sonic-boom/.test(url)],
  ['key lookup, quota, routing', (_fn, url) => /\/metering\/|sources|routing|quota|idempot/i.test(url)],
  [
    'store commit (SQLite, SQL, sync)',
    (fn, url) =>
      /\/store\/|better-sqlite3/.test(url) ||
      (url === '' && /^(run|all|get|exec|prepare|transaction|fdatasync|fsync)$/.test(fn)),
  ],
  [
    'inbound hand-over and answers',
    (_fn, url) => /\/inbound\/|node:internal\/worker|structured|messageport/i.test(url),
  ],
  [
    'HTTP (node:http, net, streams)',
    (_fn, url) =>
      /node:(_http|http|net|internal\/(streams|http|net|stream_base|timers|async_hooks|process\/task_queues))/.test(
        url,
      ) || /\/http\//.test(url),
  ],
  ['(program, native)', (fn, url) => url === '' || fn === '(program)'],
];

export function summariseProfiles(dir: string, requests: number): string {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort();
  let out = `\nCPU profile of the SQLite server (${files.length} threads), ${requests} requests served while profiled\n`;
  for (const file of files) {
    const profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as CpuProfile;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const self = new Map<number, number>();
    for (let i = 0; i < profile.samples.length; i++) {
      const id = profile.samples[i]!;
      self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
    }
    const byFunction = new Map<string, { us: number; fn: string; url: string }>();
    const byStage = new Map<string, number>();
    let total = 0;
    for (const [id, us] of self) {
      const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
      const fn = functionName || '(anonymous)';
      const short = url.replace(/^.*\/(dist|node_modules)\//, '$1/');
      const key = `${fn} ${short}:${lineNumber + 1}`;
      const entry = byFunction.get(key) ?? { us: 0, fn, url };
      entry.us += us;
      byFunction.set(key, entry);
      const stage = STAGES.find(([, test]) => test(fn, url))?.[0] ?? 'other JavaScript';
      byStage.set(stage, (byStage.get(stage) ?? 0) + us);
      total += us;
    }
    const busy = total - (byStage.get('idle') ?? 0);
    const perRequest = (us: number) => (us / requests).toFixed(1);
    out += `\n${file}: ${(total / 1e6).toFixed(1)} s profiled, ${(busy / 1e6).toFixed(1)} s busy, ${perRequest(busy)} µs busy per request\n`;
    out += `| stage | µs per request | share of busy |\n|---|---|---|\n`;
    for (const [stage, us] of [...byStage].sort((a, b) => b[1] - a[1])) {
      if (stage === 'idle') continue;
      out += `| ${stage} | ${perRequest(us)} | ${((100 * us) / busy).toFixed(1)} % |\n`;
    }
    out += `| top self time | µs per request | share of busy |\n|---|---|---|\n`;
    for (const [key, entry] of [...byFunction]
      .filter(([, e]) => e.fn !== '(idle)')
      .sort((a, b) => b[1].us - a[1].us)
      .slice(0, 20)) {
      out += `| \`${key}\` | ${perRequest(entry.us)} | ${((100 * entry.us) / busy).toFixed(1)} % |\n`;
    }
  }
  return out;
}
