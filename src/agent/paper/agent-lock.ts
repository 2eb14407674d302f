import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';

/**
 * One paper agent per account directory: two processes executing into the same file would
 * each overwrite the other's account. The lock file holds the owner's pid; a lock left by a
 * process that no longer runs (killed) is taken over.
 */
export class AgentLock {
  private constructor(private readonly file: string) {}

  static acquire(file: string): AgentLock {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(file, 'wx', 0o600);
        writeSync(fd, String(process.pid));
        closeSync(fd);
        return new AgentLock(file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const owner = Number(readFileSync(file, 'utf8').trim());
        if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isRunning(owner)) {
          throw new Error(`another agent (pid ${owner}) is running on ${file}; stop it first`);
        }
        rmSync(file, { force: true });
      }
    }
    throw new Error(`could not take the lock ${file}`);
  }

  release(): void {
    rmSync(this.file, { force: true });
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
