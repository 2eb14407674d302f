import { readFile } from 'node:fs/promises';
import type { EngineState } from '../../../engine/index.js';
import { writeFileAtomic } from '../../../files/atomic-file.js';
import type { ExecutedSignal } from '../../executed-signal.js';
import type { FeedPosition } from './price-feed.js';

/** The paper account on disk: the engine state and the signals it holds, in one file. */
export interface PaperBook {
  version: 1;
  agentId: string | null;
  engine: EngineState;
  /** Oldest first. */
  executed: ExecutedSignal[];
  /** Where the feed was; a ticks file without `file` and `sha256` was recorded before they were kept. */
  feed: FeedPosition | { kind: 'ticks-file'; applied: number; file?: undefined; sha256?: undefined };
  /**
   * The `--instruments` file the account last ran with (absolute path; null: none), for
   * messages only: what counts is the symbol map and overrides in `engine.config`. Absent in
   * books written before it was recorded.
   */
  instrumentsFile?: string | null;
  savedAt: string;
}

/**
 * Keeps the paper book in one file, replaced atomically. Because the account and the list of
 * executed signals change in the same write, a restart finds a signal's effect on the account
 * exactly when it finds the signal listed: it never executes one twice nor loses one it acked.
 */
export class PaperJournal {
  private current: Promise<void> | null = null;
  private pending: Promise<void> | null = null;

  constructor(
    private readonly file: string,
    private readonly snapshot: () => Omit<PaperBook, 'version' | 'savedAt'>,
  ) {}

  static async load(file: string): Promise<PaperBook | null> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    // The agent cannot tell which signals it executed without this file, so it never starts
    // over on its own: the operator restores the file or chooses a fresh account.
    const remedy = 'restore it from a backup, or start a new paper account with a fresh SIGNALGATE_DATA_DIR';
    let book: PaperBook;
    try {
      book = JSON.parse(text) as PaperBook;
    } catch (err) {
      throw new Error(`${file} is damaged (${(err as Error).message}); ${remedy}`);
    }
    if (!isBook(book)) throw new Error(`${file} is not a paper account this version can read; ${remedy}`);
    return book;
  }

  /**
   * Resolves once a write that began after this call is durable, so everything changed
   * before the call is on disk. Calls made while a write waits to start share it.
   */
  save(): Promise<void> {
    if (this.pending) return this.pending;
    const previous = this.current ?? Promise.resolve();
    const next: Promise<void> = previous
      .catch(() => undefined)
      .then(async () => {
        this.pending = null;
        this.current = next;
        try {
          const book: PaperBook = { version: 1, ...this.snapshot(), savedAt: new Date().toISOString() };
          await writeFileAtomic(this.file, JSON.stringify(book));
        } finally {
          if (this.current === next) this.current = null;
        }
      });
    this.pending = next;
    return next;
  }
}

function isBook(value: unknown): value is PaperBook {
  const book = value as Partial<PaperBook> | null;
  const engine = book?.engine as Partial<EngineState> | undefined;
  return (
    typeof book === 'object' &&
    book !== null &&
    book.version === 1 &&
    typeof engine === 'object' &&
    engine !== null &&
    typeof engine.config === 'object' &&
    typeof engine.balance === 'number' &&
    Array.isArray(engine.positions) &&
    Array.isArray(engine.orders) &&
    Array.isArray(book.executed) &&
    (book.feed === null || typeof book.feed?.kind === 'string')
  );
}
