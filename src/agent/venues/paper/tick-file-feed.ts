import type { Tick } from '../../../engine/index.js';
import type { FeedPosition, PriceFeed } from './price-feed.js';

/** The ticks of a `--ticks` file in time order, with what identifies the file across restarts. */
export interface TicksFile {
  /** The path as resolved at start-up, for messages. */
  readonly file: string;
  /** sha256 of the file's bytes, hex. */
  readonly sha256: string;
  readonly ticks: readonly Tick[];
}

/**
 * Replays the ticks of a file (`time,symbol,bid,ask`) in real time: the gaps between the
 * ticks' times are kept, the first tick not yet applied plays at once. Ticks carry the
 * wall-clock time they are applied at, so they line up with the signals executed meanwhile.
 * A restart resumes after the last tick applied; at the end of the file the prices stay.
 */
export class TickFileFeed implements PriceFeed {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private applied: number;

  private readonly ticks: readonly Tick[];
  readonly symbols: readonly string[];
  readonly description: string;

  /** `applied`: how many of the file's ticks were applied before a restart (of this same file). */
  constructor(
    private readonly source: TicksFile,
    applied = 0,
    private readonly onEnd: () => void = () => {},
  ) {
    this.ticks = source.ticks;
    this.symbols = [...new Set(source.ticks.map((t) => t.symbol))];
    this.description = `the ticks file ${source.file}`;
    this.applied = Math.min(applied, source.ticks.length);
  }

  start(onTick: (tick: Tick) => void): void {
    const first = this.ticks[this.applied];
    if (first === undefined) return this.onEnd();
    const wallStart = Date.now();
    const fileStart = first.time;
    const play = () => {
      if (this.stopped) return;
      const elapsed = Date.now() - wallStart;
      while (this.applied < this.ticks.length) {
        const tick = this.ticks[this.applied]!;
        if (tick.time - fileStart > elapsed) break;
        this.applied += 1;
        onTick({ symbol: tick.symbol, bid: tick.bid, ask: tick.ask, time: Date.now() });
      }
      const next = this.ticks[this.applied];
      if (next === undefined) return this.onEnd();
      this.timer = setTimeout(play, Math.max(0, next.time - fileStart - (Date.now() - wallStart)));
    };
    play();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  position(): FeedPosition {
    return { kind: 'ticks-file', file: this.source.file, sha256: this.source.sha256, applied: this.applied };
  }
}
