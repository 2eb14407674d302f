import { readFile } from 'node:fs/promises';
import type { EngineState } from '../../../engine/index.js';
import type { AckStatus } from '../../../protocol/delivery.js';
import { writeFileAtomic } from './atomic-file.js';
import type { FeedPosition } from './price-feed.js';

/** Settled outcomes kept beyond the unacknowledged ones, to recognise a late redelivery. */
const KEPT_SETTLED = 256;

/** A signal the paper account executed (or refused), and what was acknowledged for it. */
export interface ExecutedSignal {
  id: string;
  seq: number;
  executedAt: string;
  outcome: { status: AckStatus; message: string | null; result: unknown };
  /** The server settled the ack; until then it is sent again after a restart. */
  acked: boolean;
}

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

/**
 * Forgets the oldest settled outcomes beyond the latest KEPT_SETTLED; unacknowledged ones are
 * always kept. A settled signal is not handed out again, so only a redelivery racing the ack
 * needs the memory.
 */
export function forgetSettled(executed: Map<string, ExecutedSignal>): void {
  let excess = -KEPT_SETTLED;
  for (const entry of executed.values()) if (entry.acked) excess += 1;
  if (excess <= 0) return;
  for (const [id, entry] of executed) {
    if (excess <= 0) break;
    if (entry.acked) {
      executed.delete(id);
      excess -= 1;
    }
  }
}
