import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../files/atomic-file.js';
import type { ExecutedSignal } from './executed-signal.js';
import type { VenueBook } from './venue-book.js';

/** What an agent on a venue keeps on disk: its book and the signals it executed, in one file. */
export interface VenueJournalFile {
  version: 1;
  venue: string;
  agentId: string | null;
  book: VenueBook;
  /** Oldest first. */
  executed: ExecutedSignal[];
  /**
   * Signals whose execution began and has no outcome yet: after a crash their orders may stand
   * on the venue, so executing them again looks each client id up first.
   */
  inFlight: string[];
  savedAt: string;
}

/**
 * One file replaced atomically, so a restart finds a signal's effect on the book exactly when
 * it finds the signal listed as executed. Writes are serialized; a save resolves once a write
 * that began after the call is durable.
 */
export class VenueJournal {
  private chain: Promise<void> = Promise.resolve();

  constructor(
    readonly file: string,
    private readonly snapshot: () => Omit<VenueJournalFile, 'version' | 'savedAt'>,
  ) {}

  static async load(file: string): Promise<VenueJournalFile | null> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    const remedy = 'restore it from a backup; the agent cannot tell which signals it executed without it';
    let parsed: VenueJournalFile;
    try {
      parsed = JSON.parse(text) as VenueJournalFile;
    } catch (err) {
      throw new Error(`${file} is damaged (${(err as Error).message}); ${remedy}`);
    }
    if (parsed?.version !== 1 || typeof parsed.book?.state !== 'object' || !Array.isArray(parsed.executed)) {
      throw new Error(`${file} is not a venue journal this version can read; ${remedy}`);
    }
    return parsed;
  }

  save(): Promise<void> {
    const next = this.chain.catch(() => undefined).then(() =>
      writeFileAtomic(this.file, JSON.stringify({ version: 1, ...this.snapshot(), savedAt: new Date().toISOString() })),
    );
    this.chain = next;
    return next;
  }
}
