import { readdirSync, readFileSync } from 'node:fs';

/** User and system CPU a process (all its threads) has used, ms, from /proc (Linux). */
export function cpuMillis(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  // utime and stime are fields 14 and 15 of stat, 12 and 13 after the command name; in ticks of 1/100 s.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/**
 * CPU ms so far of each process named `command` (its /proc comm) that descends from this one, by
 * pid: the backends of the PostgreSQL cluster a run started, whose work for the server the
 * server's own figure leaves out. A cluster this run did not start is not counted.
 */
export function descendantCpu(command: string): Map<number, number> {
  const parents = new Map<number, number>();
  const named: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // After the command name: state, then the parent's pid.
      parents.set(Number(entry), Number(stat.replace(/^.*\) /, '').split(' ')[1]));
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === command) named.push(Number(entry));
    } catch {
      // Ended between the listing and the read.
    }
  }
  const found = new Map<number, number>();
  for (const pid of named) {
    let up = parents.get(pid);
    while (up !== undefined && up > 1 && up !== process.pid) up = parents.get(up);
    if (up !== process.pid) continue;
    try {
      found.set(pid, cpuMillis(pid));
    } catch {
      // Ended since.
    }
  }
  return found;
}

/** The CPU ms the processes of `after` spent since `before` (one absent then counted from its start). */
export function cpuSince(before: Map<number, number>, after: Map<number, number>): number {
  let spent = 0;
  for (const [pid, ms] of after) spent += ms - (before.get(pid) ?? 0);
  return spent;
}
