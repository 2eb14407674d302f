import { closeSync, lstatSync, openSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/** What signalgate gives its directories: the owner alone may list, enter and write them. */
export const PRIVATE_DIRECTORY_MODE = 0o700;
/** What signalgate gives every file it writes: the owner alone may read and write it. */
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Creates `file` empty with mode 0600 when it is missing, and leaves an existing one as it is.
 * For a file a library creates with its own mode otherwise: SQLite makes its database 0644 less
 * the umask, and gives the database's mode to the WAL and shared-memory files it makes beside it.
 */
export function createPrivateFile(file: string): void {
  closeSync(openSync(file, 'a', PRIVATE_FILE_MODE));
}

/** A path whose mode lets someone other than its owner in, and the command that closes it. */
export interface LooseMode {
  path: string;
  mode: string;
  fix: string;
}

/**
 * The directory and the files directly in it that group or others may reach (any of the
 * 0o077 bits set), with the `chmod` that makes each private. Nothing when the directory is
 * missing.
 */
export function looseModes(dir: string): LooseMode[] {
  const found: LooseMode[] = [];
  const top = statSync(dir, { throwIfNoEntry: false });
  if (top === undefined) return found;
  if ((top.mode & 0o077) !== 0) found.push(loose(dir, top.mode, PRIVATE_DIRECTORY_MODE));
  if (!top.isDirectory()) return found;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return found;
  }
  for (const name of names) {
    const file = path.join(dir, name);
    const stat = statSync(file, { throwIfNoEntry: false });
    if (stat === undefined || (stat.mode & 0o077) === 0) continue;
    if (stat.isFile()) found.push(loose(file, stat.mode, PRIVATE_FILE_MODE));
    else if (stat.isDirectory()) found.push(loose(file, stat.mode, PRIVATE_DIRECTORY_MODE));
  }
  return found;
}

/**
 * `looseModes` of `dir` and of every directory below it, each path once: for the agent, whose
 * files sit in folders of its own under the data directory (its journal and paper account under
 * `agents/`, a FIX session's state under `fix/`).
 */
export function looseModesBelow(dir: string): LooseMode[] {
  const found = new Map<string, LooseMode>();
  const pending = [dir];
  while (pending.length > 0) {
    const next = pending.pop()!;
    for (const entry of looseModes(next)) found.set(entry.path, entry);
    let names: string[];
    try {
      names = readdirSync(next);
    } catch {
      continue;
    }
    for (const name of names) {
      const child = path.join(next, name);
      const stat = lstatSync(child, { throwIfNoEntry: false });
      if (stat?.isDirectory()) pending.push(child);
    }
  }
  return [...found.values()];
}

function loose(file: string, mode: number, wanted: number): LooseMode {
  return { path: file, mode: octal(mode & 0o777), fix: `chmod ${octal(wanted)} ${file}` };
}

function octal(mode: number): string {
  return `0${mode.toString(8).padStart(3, '0')}`;
}
