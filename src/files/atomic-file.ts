import { closeSync, fsync, fsyncSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const fsyncAsync = promisify(fsync);

export interface AtomicWriteOptions {
  /** The temporary file (default `<file>.<pid>.tmp`): writes of one file under way together each need their own. */
  temp?: string;
  /** Awaited once the content is synced, before the rename: another write's rename that must come first. */
  beforeRename?: () => Promise<void>;
  /** Called once the file is renamed into place (its directory not yet synced). */
  renamed?: () => void;
}

/**
 * Replaces `file` with `content` so that after a crash at any moment the file holds either
 * the old or the new content, never a mix: write a temporary file beside it, fsync it, rename
 * it over the old one, fsync the directory so the rename itself is durable. A write that fails
 * leaves no temporary file behind (the old content stays as it was).
 *
 * Only the two fsyncs, which wait for the disk, leave the event loop; the opens, the write to the
 * page cache, the closes and the rename are done in place. Each call handed to the thread pool
 * costs two thread wake-ups, which an agent writing its journal per signal paid eight times.
 */
export async function writeFileAtomic(
  file: string,
  content: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const temp = options.temp ?? `${file}.${process.pid}.tmp`;
  try {
    const fd = openSync(temp, 'w', 0o600);
    try {
      writeFileSync(fd, content, typeof content === 'string' ? 'utf8' : null);
      await fsyncAsync(fd);
    } finally {
      closeSync(fd);
    }
    await options.beforeRename?.();
    renameSync(temp, file);
    options.renamed?.();
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  const dir = openSync(path.dirname(file), 'r');
  try {
    await fsyncAsync(dir);
  } finally {
    closeSync(dir);
  }
}

/**
 * `writeFileAtomic` done before it returns, for state written in the middle of synchronous
 * work (a FIX session's sequence numbers before a message leaves, its orders record as each
 * report is applied): two writes in flight could otherwise land out of order.
 */
export function writeFileAtomicSync(file: string, content: string): void {
  const temp = `${file}.${process.pid}.tmp`;
  try {
    const fd = openSync(temp, 'w', 0o600);
    try {
      writeFileSync(fd, content, 'utf8');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  const dir = openSync(path.dirname(file), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}
