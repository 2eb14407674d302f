import { readFileSync } from 'node:fs';

/** User and system CPU a process (all its threads) has used, ms, from /proc (Linux). */
export function cpuMillis(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  // utime and stime are fields 14 and 15 of stat, 12 and 13 after the command name; in ticks of 1/100 s.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}
