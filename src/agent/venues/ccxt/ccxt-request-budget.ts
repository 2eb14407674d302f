/**
 * What an exchange lets one account send, counted the exchange's way, in place of CCXT's own
 * limiter (which spaces every call by its `rateLimit`, so the reads before an order each add tens
 * of milliseconds, and an order waits behind whatever poll went before it).
 *
 * Requests are counted in rolling windows; a request goes out at once while every window it
 * counts in has room. Two kinds: `order` (what a signal sends, and the reads its decision cannot
 * do without) and `background` (the reads that keep held data fresh, the reconciliation's, the
 * reports'). Background reads give way: they wait while an order is waiting or being sent, and
 * leave a share of each window to orders. An order never queues behind a poll.
 */
export type RequestKind = 'order' | 'background';

export interface RequestWindow {
  /** Binance's name for it (REQUEST_WEIGHT, ORDERS), for messages. */
  name: string;
  ms: number;
  limit: number;
  /** What this window counts: request weights, or orders placed. */
  counts: 'weight' | 'orders';
}

/** One request: its weight (the exchange's documented one) and whether it places an order. */
export interface BudgetRequest {
  weight: number;
  placesOrder: boolean;
  kind: RequestKind;
}

/** Of each window, the share background reads leave to orders. */
const ORDER_RESERVE = 0.2;

/**
 * Binance USDⓈ-M futures' limits as its documentation and its exchangeInfo `rateLimits` state
 * them: REQUEST_WEIGHT 2400 per minute (per IP), ORDERS 300 per 10 s and 1200 per minute (per
 * account). New and cancelled orders weigh 0 and 1 on the IP limit, and count 1 on the order limits.
 */
export const BINANCE_USDM_WINDOWS: RequestWindow[] = [
  { name: 'REQUEST_WEIGHT', ms: 60_000, limit: 2400, counts: 'weight' },
  { name: 'ORDERS', ms: 10_000, limit: 300, counts: 'orders' },
  { name: 'ORDERS', ms: 60_000, limit: 1200, counts: 'orders' },
];

/**
 * Other exchanges: CCXT's own pace (`rateLimit` ms per unit of cost) as a one-second window,
 * so requests within a second go out together instead of one per `rateLimit`.
 */
export function windowsOfPace(rateLimitMs: number): RequestWindow[] {
  return [{ name: 'rate limit', ms: 1000, limit: Math.max(1, Math.floor(1000 / rateLimitMs)), counts: 'weight' }];
}

export class RequestBudget {
  /** What went out, newest last: when, its weight, whether it was an order. */
  private readonly sent: { at: number; weight: number; order: boolean }[] = [];
  /** Orders waiting for room or being counted now: background reads wait while there are any. */
  private ordersWaiting = 0;
  /**
   * Resolves once the last background read to ask has gone out: each waits for the one before
   * it, so a heavier one (an account read, weight 5) is not overtaken for ever by lighter ones
   * (order books, weight 2) that fit the room each second frees.
   */
  private backgroundTurn: Promise<void> = Promise.resolve();

  constructor(
    private readonly windows: RequestWindow[],
    private readonly now: () => number = Date.now,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {}

  /** Resolves when the request may go out, and counts it. */
  async take(request: BudgetRequest): Promise<void> {
    if (request.kind === 'order') {
      this.ordersWaiting += 1;
      try {
        await this.room(request);
      } finally {
        this.ordersWaiting -= 1;
      }
      return;
    }
    const before = this.backgroundTurn;
    let gone: () => void = () => undefined;
    this.backgroundTurn = new Promise((resolve) => (gone = resolve));
    try {
      await before;
      await this.room(request);
    } finally {
      gone();
    }
  }

  /** Waits until every window the request counts in has room for it, and counts it. */
  private async room(request: BudgetRequest): Promise<void> {
    for (;;) {
      const wait = this.waitFor(request);
      if (wait === 0) {
        this.sent.push({ at: this.now(), weight: request.weight, order: request.placesOrder });
        return;
      }
      await this.sleep(wait);
    }
  }

  /** Used in each window now: for tests and the published state. */
  used(): { name: string; ms: number; used: number; limit: number }[] {
    const now = this.now();
    this.forget(now);
    return this.windows.map((w) => ({ name: w.name, ms: w.ms, used: this.usedIn(w, now), limit: w.limit }));
  }

  /** 0: the request may go now; otherwise ms until it may look again. */
  private waitFor(request: BudgetRequest): number {
    const now = this.now();
    this.forget(now);
    // Background reads give way to any order waiting; they look again shortly.
    if (request.kind === 'background' && this.ordersWaiting > 0) return 5;
    let wait = 0;
    for (const w of this.windows) {
      const amount = w.counts === 'weight' ? request.weight : request.placesOrder ? 1 : 0;
      if (amount === 0) continue;
      const limit = request.kind === 'background' ? w.limit * (1 - ORDER_RESERVE) : w.limit;
      // A request larger than the window can ever hold goes out once the window is empty.
      if (this.usedIn(w, now) + amount <= limit || this.usedIn(w, now) === 0) continue;
      wait = Math.max(wait, this.untilRoom(w, now, amount, limit));
    }
    return wait;
  }

  private usedIn(w: RequestWindow, now: number): number {
    let used = 0;
    for (const s of this.sent) {
      if (s.at <= now - w.ms) continue;
      used += w.counts === 'weight' ? s.weight : s.order ? 1 : 0;
    }
    return used;
  }

  /** How long until enough of the window's oldest requests leave it for `amount` more. */
  private untilRoom(w: RequestWindow, now: number, amount: number, limit: number): number {
    let used = this.usedIn(w, now);
    for (const s of this.sent) {
      if (s.at <= now - w.ms) continue;
      used -= w.counts === 'weight' ? s.weight : s.order ? 1 : 0;
      if (used + amount <= limit) return Math.max(1, s.at + w.ms - now + 1);
    }
    return Math.max(1, w.ms);
  }

  private forget(now: number): void {
    const longest = Math.max(...this.windows.map((w) => w.ms));
    while (this.sent.length > 0 && this.sent[0]!.at <= now - longest) this.sent.shift();
  }
}
