import { defaultInstrument, type Quote, type Tick } from '../../../engine/index.js';
import type { FeedPosition, PriceFeed } from './price-feed.js';
import { REFERENCE_PRICES } from './reference-prices.js';
import { SeededRandom } from './seeded-random.js';

const STEP_MS = 1000;

/**
 * Prices for every reference symbol, moving by a random walk once a second (log-normal steps
 * at the symbol's volatility, its spread kept). Deterministic for a seed; a restart continues
 * from the last prices and generator state kept on disk. Ticks carry the wall-clock time.
 */
export class RandomWalkFeed implements PriceFeed {
  private readonly random: SeededRandom;
  private readonly mids = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  readonly symbols = Object.keys(REFERENCE_PRICES);
  readonly description = 'the built-in random walk';

  /**
   * `seed`: the generator state (a `--seed`, or the state kept on disk); `last`: the prices
   * the account saw last, by canonical symbol, to continue from.
   */
  constructor(seed: number, last: ReadonlyMap<string, Quote> = new Map()) {
    this.random = new SeededRandom(seed);
    for (const [symbol, ref] of Object.entries(REFERENCE_PRICES)) {
      const quote = last.get(symbol);
      this.mids.set(symbol, quote ? (quote.bid + quote.ask) / 2 : ref.mid);
    }
  }

  start(onTick: (tick: Tick) => void): void {
    // The first prices at once, so signals arriving at start-up find a market.
    this.emit(onTick, false);
    this.timer = setInterval(() => this.emit(onTick, true), STEP_MS);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  position(): FeedPosition {
    return { kind: 'random-walk', randomState: this.random.position };
  }

  private emit(onTick: (tick: Tick) => void, move: boolean): void {
    const time = Date.now();
    for (const [symbol, ref] of Object.entries(REFERENCE_PRICES)) {
      let mid = this.mids.get(symbol)!;
      if (move) {
        mid *= Math.exp(ref.volatility * this.random.normal());
        this.mids.set(symbol, mid);
      }
      const digits = defaultInstrument(symbol)?.digits ?? 5;
      const bid = round(mid - ref.spread / 2, digits);
      const ask = round(bid + ref.spread, digits);
      onTick({ time, symbol, bid, ask });
    }
  }
}

function round(value: number, digits: number): number {
  return Number(value.toFixed(digits));
}
