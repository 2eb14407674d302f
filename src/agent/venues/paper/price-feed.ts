import type { Tick } from '../../../engine/index.js';

/** A source of ticks for the paper account: started with a listener, stopped on shutdown. */
export interface PriceFeed {
  start(onTick: (tick: Tick) => void): void;
  stop(): void;
  /** Every symbol it ever quotes, as spelt in the feed; a symbol not among them will never have a price. */
  readonly symbols: readonly string[];
  /** What the feed is, for messages: `the built-in random walk`, `the ticks file /x/t.csv`. */
  readonly description: string;
  /** What to keep on disk so a restarted agent continues the feed where it stopped. */
  position(): FeedPosition;
}

/**
 * A ticks file is named by its path and identified by its content's sha256: a restart resumes
 * after `applied` ticks only in the same content, since a count means nothing in another file.
 */
export type FeedPosition =
  | { kind: 'random-walk'; randomState: number }
  | { kind: 'ticks-file'; file: string; sha256: string; applied: number }
  | null;
