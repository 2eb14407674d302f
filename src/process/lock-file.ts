import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';

/** What the lock file holds: the owner's pid, when that process started, and a token of its own. */
interface LockOwner {
  pid: number;
  /** Start time of the process in clock ticks since boot (Linux /proc/<pid>/stat); null elsewhere. */
  startTime: string | null;
  token: string;
}

/** Who takes a lock file, for its messages and for judging a lock that names no start time. */
export interface LockRole {
  /** A noun for the owner: 'agent', 'server'. */
  name: string;
  /** The owner's kind in full, e.g. 'signalgate paper agent'. */
  title: string;
  /** Where a rival would be starting, e.g. 'on the same account'. */
  place: string;
  /** Whether a process's command-line arguments are those of this role. */
  runsAs: (args: string[]) => boolean;
}

/**
 * One process of a role per directory (one paper agent per account, one server per SQLite data
 * directory). The lock file names its owner; a lock left by a process that no longer runs
 * (killed) is taken over.
 *
 * A pid alone is not enough: after a crash and a reboot, or just a while, the pid may belong
 * to an unrelated process, and the lock would block the directory for good. So the owner is the
 * pid together with the process's start time (the pair never repeats); a lock without it (an
 * older agent's) counts as held only when that pid runs as the role. Where /proc is missing
 * (not Linux), a running pid counts as the owner and the message says how to clear the lock.
 */
export class LockFile {
  private constructor(
    private readonly file: string,
    private readonly token: string,
    /** Why a lock found in place was taken over, for the log; null when there was none. */
    readonly tookOver: string | null,
  ) {}

  static acquire(file: string, role: LockRole): LockFile {
    const owner: LockOwner = { pid: process.pid, startTime: startTimeOf(process.pid), token: randomBytes(16).toString('hex') };
    let tookOver: string | null = null;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const fd = openSync(file, 'wx', 0o600);
        try {
          writeSync(fd, JSON.stringify(owner));
        } finally {
          closeSync(fd);
        }
        return new LockFile(file, owner.token, tookOver);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const text = readLock(file);
        if (text === null) continue; // removed meanwhile: try again
        const stale = staleReason(text, role);
        if (stale === null) {
          const pid = readOwner(text)?.pid;
          throw new LockHeldError(
            pid ?? null,
            `another ${role.name} (pid ${pid}) is running on ${file}; stop it first (if no ${role.name} runs there, delete ${file})`,
          );
        }
        // Removed only if it still holds what was judged stale, so a lock another agent
        // took meanwhile is not deleted from under it.
        if (readLock(file) === text) rmSync(file, { force: true });
        tookOver = stale;
      }
    }
    throw new LockHeldError(null, `could not take the lock ${file}; another ${role.name} may be starting ${role.place}`);
  }

  /** Removes the lock, unless another process took it over meanwhile. */
  release(): void {
    const text = readLock(this.file);
    if (text !== null && readOwner(text)?.token === this.token) rmSync(this.file, { force: true });
  }
}

/** The lock is held by a process that runs: `pid` names it when the lock file says. */
export class LockHeldError extends Error {
  constructor(
    readonly pid: number | null,
    message: string,
  ) {
    super(message);
    this.name = 'LockHeldError';
  }
}

function readLock(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** The owner named by a lock: JSON, or a bare pid from an agent before start times were kept. */
function readOwner(text: string): Partial<LockOwner> | null {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return { pid: Number(trimmed), startTime: null };
  try {
    const value = JSON.parse(trimmed) as Partial<LockOwner> | null;
    return typeof value === 'object' && value !== null && Number.isInteger(value.pid) ? value : null;
  } catch {
    return null;
  }
}

/** Why the lock's owner is gone (a sentence), or null when it still runs. */
function staleReason(text: string, role: LockRole): string | null {
  const owner = readOwner(text);
  if (owner === null || owner.pid === undefined || owner.pid <= 0) return `the lock file was unreadable (${role.name === 'agent' ? 'an' : 'a'} ${role.name} died while writing it)`;
  const pid = owner.pid;
  if (pid === process.pid) return `the lock named this very process (pid ${pid})`;
  if (!isRunning(pid)) return `its ${role.name} (pid ${pid}) no longer runs`;
  const startTime = startTimeOf(pid);
  if (startTime === null) return null; // no /proc: a running pid is all there is to go by
  if (owner.startTime) {
    return owner.startTime === startTime ? null : `pid ${pid} now belongs to another process (it started later than the ${role.name} that took the lock)`;
  }
  return runsAs(pid, role) ? null : `pid ${pid} now belongs to a process that is not a ${role.title}`;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Field 22 of /proc/<pid>/stat, counted after the command name (which may hold spaces and parentheses). */
function startTimeOf(pid: number): string | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
}

/** Whether the process's command line is the role's. */
function runsAs(pid: number, role: LockRole): boolean {
  try {
    return role.runsAs(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0'));
  } catch {
    return false;
  }
}
