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
  /** The sentence the server and the agent warn with at start. */
  warning: string;
}

/**
 * The directory and the files in it that group or others may reach (any of the 0o077 bits
 * set), with the `chmod` that makes each private; with `below`, also everything in the
 * directories under it (the agent's files sit in folders of their own: its journal and paper
 * account under `agents/`, a FIX session's state under `fix/`). Nothing when the directory is
 * missing. Each directory is read once.
 */
export function looseModes(dir: string, options: { below?: boolean } = {}): LooseMode[] {
  const found: LooseMode[] = [];
  const top = statSync(dir, { throwIfNoEntry: false });
  if (top === undefined) return found;
  if ((top.mode & 0o077) !== 0) found.push(loose(dir, top.mode, PRIVATE_DIRECTORY_MODE));
  if (top.isDirectory()) collectLoose(dir, options.below === true, found);
  return found;
}

function collectLoose(dir: string, below: boolean, found: LooseMode[]): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const file = path.join(dir, name);
    const stat = statSync(file, { throwIfNoEntry: false });
    if (stat === undefined) continue;
    if ((stat.mode & 0o077) !== 0) {
      if (stat.isFile()) found.push(loose(file, stat.mode, PRIVATE_FILE_MODE));
      else if (stat.isDirectory()) found.push(loose(file, stat.mode, PRIVATE_DIRECTORY_MODE));
    }
    // Not through a link: a directory is walked where it is, once.
    if (below && lstatSync(file, { throwIfNoEntry: false })?.isDirectory()) collectLoose(file, below, found);
  }
}

function loose(file: string, mode: number, wanted: number): LooseMode {
  const shown = octal(mode & 0o777);
  const fix = `chmod ${octal(wanted)} ${file}`;
  return {
    path: file,
    mode: shown,
    fix,
    warning: `${file} is mode ${shown}, open to other users of this machine; run: ${fix}`,
  };
}

function octal(mode: number): string {
  return `0${mode.toString(8).padStart(3, '0')}`;
}
