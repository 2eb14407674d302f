import { closeSync, fdatasync, openSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { writeFileAtomic } from '../files/atomic-file.js';

const fdatasyncAsync = promisify(fdatasync);

/** Past this size the next write replaces the file with its one record, so a start reads little. */
const REWRITE_ABOVE_BYTES = 4 * 1024 * 1024;

/** What every journal file carries besides its venue's content. */
export interface JournalRecord {
  version: 1;
  savedAt: string;
}

/**
 * A field of a journal file given as its JSON, in UTF-8 pieces written one after another: what
 * is serialised once and written many times (the executed signals, which change one at a time)
 * is neither serialised nor encoded again at each write, nor joined into one large string.
 */
export class JournalJson {
  constructor(readonly pieces: readonly Uint8Array[]) {}
}

/** What a journal's snapshot gives: the file's own fields, any of them as ready JSON. */
export type JournalFields<T extends JournalRecord> = {
  [K in keyof Omit<T, keyof JournalRecord>]: Omit<T, keyof JournalRecord>[K] | JournalJson;
};

/** One kind of journal file: how messages name it, what the operator can do about it, what it must hold. */
export interface JournalFormat<T extends JournalRecord> {
  /** 'a paper account', 'a venue journal'. */
  kind: string;
  /** What to do with a damaged or unreadable file: the agent never starts over on its own. */
  remedy: string;
  accepts(value: unknown): value is T;
}

/**
 * An agent's book and the signals it executed, in one file: each write adds the whole state as one
 * line and syncs it (`fdatasync`), and a start reads the last whole line. A restart finds a
 * signal's effect on the book exactly when it finds the signal listed as executed, so it never
 * executes one twice nor loses one it acknowledged. Adding to an open file costs one sync per
 * write where replacing the file (temporary file, sync, rename, sync of the folder) cost two and
 * a new file; the file is replaced only at a run's first write and when it grows past a bound.
 */
export class AgentJournal<T extends JournalRecord> {
  /** Writes under way, oldest first: each adds its record after the one before it, and ends after it. */
  private readonly writes: JournalWrite[] = [];
  private pending: Promise<void> | null = null;
  private closed = false;
  private opened: OpenedJournal | null = null;

  /**
   * `written`: called with a write's snapshot once it is durable, in the order the snapshots were
   * taken. `first`: what must be on disk before this file says what it says, awaited after the
   * snapshot is taken and before it is written (so it covers everything the snapshot holds).
   * `writesAtOnce`: 1, a write begins once the one under way ends; 2, a write begins while one
   * is under way (its record still after that one's), so what a save asks for while a write is
   * on its way to the disk waits for that write's end, not for it and a whole write after it.
   */
  constructor(
    readonly file: string,
    private readonly snapshot: () => JournalFields<T>,
    private readonly written: (snapshot: JournalFields<T>) => void = () => undefined,
    private readonly first: () => Promise<void> = () => Promise.resolve(),
    private readonly writesAtOnce: 1 | 2 = 1,
  ) {}

  /** The stored file, or null when there is none yet. */
  static async load<T extends JournalRecord>(file: string, format: JournalFormat<T>): Promise<T | null> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    let parsed: unknown;
    try {
      parsed = lastJournalRecord(text);
    } catch (err) {
      throw new Error(`${file} is damaged (${(err as Error).message}); ${format.remedy}`);
    }
    if (!format.accepts(parsed))
      throw new Error(`${file} is not ${format.kind} this version can read; ${format.remedy}`);
    return parsed;
  }

  /**
   * Resolves once a write that began after this call is durable, so everything changed
   * before the call is on disk. Calls made while a write waits to start share it.
   */
  save(): Promise<void> {
    // Closed: the file is the next run's (a step left running at the stop must not overwrite it).
    if (this.closed) return this.writes.at(-1)?.done ?? Promise.resolve();
    if (this.pending) return this.pending;
    // A write begins once a write ends when as many are under way as may be; otherwise once this
    // turn's I/O callbacks have run: the lanes one socket read woke (a basket's signals) reach
    // here in the same turn and share it.
    const full = this.writes.length >= this.writesAtOnce ? this.writes.at(-this.writesAtOnce)!.done : null;
    const start = full ?? new Promise<void>((resolve) => setImmediate(resolve));
    const next: Promise<void> = start
      .catch(() => undefined)
      .then(async () => {
        this.pending = null;
        const before = this.writes.at(-1) ?? null;
        const write = new JournalWrite(next);
        this.writes.push(write);
        try {
          const fields = this.snapshot();
          const record = serialise({ version: 1, ...fields, savedAt: new Date().toISOString() });
          await this.first();
          // An older snapshot added after a newer one would take back what the newer one holds.
          await before?.added;
          const opened = this.opened;
          if (opened === null || opened.failed || opened.size + record.length > REWRITE_ABOVE_BYTES) {
            await this.rewrite(record, before);
            write.add();
          } else {
            append(opened, record);
            write.add();
            await fdatasyncAsync(opened.fd).catch((err: unknown) => {
              opened.failed = true;
              throw err;
            });
          }
          await before?.done.catch(() => undefined);
          this.written(fields);
        } finally {
          write.add();
          this.writes.splice(this.writes.indexOf(write), 1);
        }
      });
    this.pending = next;
    return next;
  }

  /** No write starts after this; resolves once those under way, if any, are done, and the file is closed. */
  async close(): Promise<void> {
    this.closed = true;
    await (this.pending ?? this.writes.at(-1)?.done ?? Promise.resolve()).catch(() => undefined);
    if (this.opened !== null) closeSync(this.opened.fd);
    this.opened = null;
  }

  /**
   * The file replaced whole by one holding `record` alone, then kept open to add to: at the first
   * write of a run (a record left half-written by a crash goes with it), after a failed write, and
   * once the file has grown past its bound. Earlier writes are done first: none is still syncing
   * the descriptor closed here.
   */
  private async rewrite(record: Buffer, before: JournalWrite | null): Promise<void> {
    await before?.done.catch(() => undefined);
    if (this.opened !== null) closeSync(this.opened.fd);
    this.opened = null;
    await writeFileAtomic(this.file, record);
    this.opened = { fd: openSync(this.file, 'a'), size: record.length, failed: false };
  }
}

/** The journal file held open between writes: its size so far, and whether a write to it failed (it is then replaced). */
interface OpenedJournal {
  fd: number;
  size: number;
  failed: boolean;
}

/** Adds a record at the end of the file, into the page cache (the caller syncs it). */
function append(opened: OpenedJournal, record: Buffer): void {
  try {
    let offset = 0;
    while (offset < record.length) offset += writeSync(opened.fd, record, offset);
  } catch (err) {
    // Part of the record may be in the file: the next write replaces the file rather than add after it.
    opened.failed = true;
    throw err;
  }
  opened.size += record.length;
}

/**
 * The state a journal file holds: its last line that is whole JSON. A record is one line; a crash
 * while records were being added can leave the last ones cut short, which never parse (a JSON
 * object cut anywhere is not JSON), and they were never reported written. A file from before
 * records were added (one JSON object, no line end) is its own last line.
 */
export function lastJournalRecord(text: string): unknown {
  let end = text.length;
  let failure: Error | null = null;
  while (end > 0) {
    const start = text.lastIndexOf('\n', end - 1) + 1;
    const line = text.slice(start, end);
    end = start - 1;
    if (line.trim() === '') continue;
    try {
      return JSON.parse(line);
    } catch (err) {
      failure ??= err as Error;
    }
  }
  throw failure ?? new Error('the file is empty');
}

/** One write of a journal: when its record has been added to the file (or it failed before), and its end. */
class JournalWrite {
  readonly added: Promise<void>;
  add: () => void = () => undefined;

  constructor(readonly done: Promise<void>) {
    this.added = new Promise((resolve) => (this.add = resolve));
  }
}

/** `JSON.stringify` of the record as UTF-8, its fields given as `JournalJson` taken as they are, ended by a line end. */
function serialise(record: Record<string, unknown>): Buffer {
  const pieces: Uint8Array[] = [];
  let between = '{';
  for (const [key, value] of Object.entries(record)) {
    const json = value instanceof JournalJson ? '' : (JSON.stringify(value) as string | undefined);
    // As JSON.stringify leaves out a field it cannot write (undefined).
    if (json === undefined) continue;
    pieces.push(Buffer.from(`${between}${JSON.stringify(key)}:${json}`));
    if (value instanceof JournalJson) pieces.push(...value.pieces);
    between = ',';
  }
  pieces.push(Buffer.from(between === '{' ? '{}\n' : '}\n'));
  return Buffer.concat(pieces);
}
