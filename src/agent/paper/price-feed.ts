import type { Tick } from '../../engine/index.js';

/** A source of ticks for the paper account: started with a listener, stopped on shutdown. */
export interface PriceFeed {
  start(onTick: (tick: Tick) => void): void;
  stop(): void;
  /** What to keep on disk so a restarted agent continues the feed where it stopped. */
  position(): FeedPosition;
}

export type FeedPosition = { kind: 'random-walk'; randomState: number } | { kind: 'ticks-file'; applied: number } | null;
