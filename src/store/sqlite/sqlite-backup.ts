import { closeSync, existsSync, fsyncSync, linkSync, openSync, rmSync } from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { createPrivateFile } from '../../files/private-files.js';
import { BackupError } from '../backup-error.js';

/**
 * Writes a consistent copy of the database to `file`, while a server may be writing to it.
 *
 * `VACUUM INTO` reads the whole database inside one read transaction: in WAL mode that sees
 * one committed state (everything committed before it began, nothing after) and never blocks
 * the server's writes. (The online backup API copies in steps and starts over whenever another
 * process writes between two steps, so under steady traffic it might never finish.) The copy
 * is written beside `file`, synced, and only then linked to its name, so `file` is either a
 * whole backup or absent; an existing `file` is never overwritten.
 */
export function copySqliteDatabase(db: Database.Database, file: string): void {
  const target = path.resolve(file);
  if (existsSync(target))
    throw new BackupError(`${target} exists; give a file name that does not, so no earlier backup is overwritten`);
  const partial = `${target}.partial-${process.pid}`;
  rmSync(partial, { force: true });
  try {
    try {
      // Empty and 0600, which VACUUM INTO writes into as it is: the copy holds every secret.
      createPrivateFile(partial);
      db.prepare('VACUUM INTO ?').run(partial);
    } catch (error) {
      throw new BackupError(
        `cannot write the backup to ${target}: ${(error as Error).message}; check that its directory exists and this user can write there`,
        {
          cause: error,
        },
      );
    }
    syncFile(partial);
    try {
      linkSync(partial, target);
    } catch (error) {
      throw new BackupError(`cannot name the backup ${target}: ${(error as Error).message}`, { cause: error });
    }
    syncFile(path.dirname(target));
  } finally {
    rmSync(partial, { force: true });
  }
}

function syncFile(file: string): void {
  const fd = openSync(file, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
