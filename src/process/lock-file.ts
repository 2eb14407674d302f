import { closeSync, openSync, readFileSync, statSync, truncateSync } from 'node:fs';
import Database from 'better-sqlite3';

/** Who takes a lock file, for its messages and for judging a lock left by an earlier version. */
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
 * directory), guarded by a lock the kernel holds for the process and drops the moment it dies,
 * so a supervisor can restart a killed process at once, and a second live one is refused.
 *
 * The lock is SQLite's own: the file is a tiny SQLite database held in exclusive locking mode,
 * which keeps a POSIX record lock (fcntl) on it for as long as the connection is open. That
 * needs no native module beyond the better-sqlite3 the store already uses. The file stays in
 * place after release; only the kernel's lock on it counts, never its presence. (It is never
 * deleted: a process could still hold the lock on a deleted file while another took a new one.)
 */
export class LockFile {
  private constructor(
    private readonly db: Database.Database,
    /** Why a lock left by an earlier signalgate version was taken over, for the log; else null. */
    readonly tookOver: string | null,
  ) {}

  static acquire(file: string, role: LockRole): LockFile {
    let tookOver: string | null = null;
    for (;;) {
      // Owner-only, made before SQLite opens it (which would make it 0644 less the umask).
      closeSync(openSync(file, 'a', 0o600));
      const db = new Database(file, { timeout: 0 });
      try {
        db.pragma('locking_mode = EXCLUSIVE');
        // Kept after COMMIT in exclusive locking mode, until the connection closes.
        db.exec('BEGIN EXCLUSIVE');
        // A fresh (empty) file gets one write, so it is a database whose lock SQLite takes.
        if (db.pragma('user_version', { simple: true }) === 0) db.pragma('user_version = 1');
        db.exec('COMMIT');
        return new LockFile(db, tookOver);
      } catch (error) {
        db.close();
        const code = (error as { code?: string }).code;
        if (code === 'SQLITE_BUSY') {
          const pid = holderOf(file);
          throw new LockHeldError(
            pid,
            `another ${role.name}${pid === null ? '' : ` (pid ${pid})`} is running on ${file}; stop it first`,
          );
        }
        if (code !== 'SQLITE_NOTADB' || tookOver !== null) throw error;
        tookOver = takeOverEarlierLock(file, role);
      }
    }
  }

  /** Gives the lock back (closing the connection drops the kernel's lock). */
  release(): void {
    if (this.db.open) this.db.close();
  }
}

/** The lock is held by a process that runs: `pid` names it when it is known. */
export class LockHeldError extends Error {
  constructor(
    readonly pid: number | null,
    message: string,
  ) {
    super(message);
    this.name = 'LockHeldError';
  }
}

/**
 * Earlier signalgate versions wrote the owner's pid (as JSON, or bare) into the same file. Such a lock counts
 * as held while that pid runs as the role; otherwise the file is emptied in place (never
 * deleted, see above) and taken. Answers why it was taken over.
 */
function takeOverEarlierLock(file: string, role: LockRole): string {
  const text = readFileSync(file, 'utf8').trim();
  const match = /^\d+$/.test(text) ? text : /"pid"\s*:\s*(\d+)/.exec(text)?.[1];
  const pid = match === undefined ? null : Number(match);
  if (pid !== null && pid !== process.pid && isRunning(pid) && runsAs(pid, role)) {
    throw new LockHeldError(
      pid,
      `another ${role.name} (pid ${pid}, an earlier signalgate version) is running on ${file}; stop it first (if no ${role.title} runs there, delete ${file})`,
    );
  }
  truncateSync(file, 0);
  return pid === null
    ? `${file} held something other than a lock (an earlier version's, unreadable)`
    : `${file} was an earlier version's lock, and its pid ${pid} no longer runs a ${role.title}`;
}

/**
 * The pid holding a POSIX lock on `file`, from the kernel's list of locks (Linux), or null
 * where that list is not to be had. Only for the message: the lock itself decides.
 */
function holderOf(file: string): number | null {
  let locks: string;
  let inode: number;
  try {
    inode = statSync(file).ino;
    locks = readFileSync('/proc/locks', 'utf8');
  } catch {
    return null;
  }
  // e.g. `3: POSIX  ADVISORY  WRITE 16288 fe:00:2146913 1073741824 1073742335`
  for (const line of locks.split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields[1] !== 'POSIX' || fields[3] !== 'WRITE') continue;
    if (Number(fields[5]?.split(':')[2]) === inode) return Number(fields[4]);
  }
  return null;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the process's command line is the role's (true where /proc is missing: the pid runs). */
function runsAs(pid: number, role: LockRole): boolean {
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return !existsProc();
  }
  return role.runsAs(cmdline.split('\0'));
}

function existsProc(): boolean {
  try {
    statSync('/proc/self');
    return true;
  } catch {
    return false;
  }
}
