import { type ChildProcess, spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';

/**
 * Takes `percent` of every core from whatever else runs, as a slower machine (or a noisy
 * neighbour) would: one process per core, busy for `percent` ms of every 100 ms and asleep the
 * rest. Answers the function that stops them.
 */
export function busyCores(percent: number): () => void {
  if (!(percent > 0 && percent < 100)) throw new Error(`busy percent ${percent}: give 1 to 99`);
  // Each ends when its standard input does, so none outlives a benchmark that was killed.
  const loop =
    `process.stdin.on('end', () => process.exit()).resume(); ` +
    `for (;;) { const t = Date.now(); while (Date.now() - t < ${percent}) {} await new Promise((r) => setTimeout(r, ${100 - percent})); }`;
  const children: ChildProcess[] = Array.from({ length: availableParallelism() }, () =>
    spawn(process.execPath, ['--input-type=module', '-e', loop], { stdio: ['pipe', 'ignore', 'ignore'] }),
  );
  return () => {
    for (const child of children) child.kill('SIGKILL');
  };
}
