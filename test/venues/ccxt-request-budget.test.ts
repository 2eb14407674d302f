import { describe, expect, it } from 'vitest';
import { BINANCE_USDM_WINDOWS, RequestBudget, windowsOfPace } from '../../src/agent/venues/ccxt/ccxt-request-budget.js';

/** A clock the test moves: sleeping advances it, so waits are measured, not slept. */
function clock() {
  let now = 1_000_000;
  return {
    now: () => now,
    sleep: async (ms: number) => {
      now += ms;
      await Promise.resolve();
    },
    at: () => now,
  };
}

describe("the request budget counts Binance USDⓈ-M's documented weights", () => {
  it('a burst of background reads does not delay an order: the order goes out at once', async () => {
    const c = clock();
    const budget = new RequestBudget(BINANCE_USDM_WINDOWS, c.now, c.sleep);
    // 384 account reads of weight 5: 1920 of the 2400 a minute, all of the background's share (80%).
    for (let i = 0; i < 384; i += 1) await budget.take({ weight: 5, placesOrder: false, kind: 'background' });
    expect(c.at()).toBe(1_000_000);
    const before = c.at();
    await budget.take({ weight: 0, placesOrder: true, kind: 'order' });
    expect(c.at() - before).toBe(0);
    // The next background read would pass the background's share: it waits for the window, the order did not.
    const read = budget.take({ weight: 5, placesOrder: false, kind: 'background' });
    await read;
    expect(c.at() - before).toBeGreaterThan(50_000);
    expect(budget.used().find((w) => w.name === 'REQUEST_WEIGHT')?.used).toBeLessThanOrEqual(2400);
  });

  it('background reads wait while an order waits, and orders keep within ORDERS 300 per 10 s', async () => {
    const c = clock();
    const budget = new RequestBudget(BINANCE_USDM_WINDOWS, c.now, c.sleep);
    for (let i = 0; i < 300; i += 1) await budget.take({ weight: 0, placesOrder: true, kind: 'order' });
    expect(c.at()).toBe(1_000_000);
    const sent: string[] = [];
    const order = budget.take({ weight: 0, placesOrder: true, kind: 'order' }).then(() => sent.push(`order@${c.at()}`));
    const read = budget
      .take({ weight: 2, placesOrder: false, kind: 'background' })
      .then(() => sent.push(`read@${c.at()}`));
    await Promise.all([order, read]);
    // The 301st order waits for the 10 s window; the read, which has room, still lets it go first.
    expect(sent[0]).toMatch(/^order@/);
    expect(Number(sent[0]!.split('@')[1]) - 1_000_000).toBeGreaterThanOrEqual(10_000);
  });

  it('reads in front of a decision go out together, not one per rate-limit interval', async () => {
    const c = clock();
    const budget = new RequestBudget(BINANCE_USDM_WINDOWS, c.now, c.sleep);
    await Promise.all([
      budget.take({ weight: 2, placesOrder: false, kind: 'order' }),
      budget.take({ weight: 5, placesOrder: false, kind: 'order' }),
      budget.take({ weight: 5, placesOrder: false, kind: 'order' }),
    ]);
    expect(c.at()).toBe(1_000_000);
  });

  it('background reads go out in their turn: an account read is not overtaken by lighter order-book reads', async () => {
    const c = clock();
    const budget = new RequestBudget(BINANCE_USDM_WINDOWS, c.now, c.sleep);
    // The background's share (1,920 of 2,400 a minute) used up by order-book reads of weight 2
    // spread over the minute, so that room frees 2 at a time.
    for (let i = 0; i < 960; i += 1) {
      await budget.take({ weight: 2, placesOrder: false, kind: 'background' });
      await c.sleep(62);
    }
    const sent: string[] = [];
    const account = budget.take({ weight: 5, placesOrder: false, kind: 'background' }).then(() => sent.push('account'));
    // Order-book reads keep coming after it, each as room for 2 frees.
    let books = 0;
    const more = (async () => {
      while (sent.length === 0 && books < 20) {
        books += 1;
        await budget.take({ weight: 2, placesOrder: false, kind: 'background' });
        sent.push('book');
      }
    })();
    await Promise.all([account, more]);
    expect(sent[0]).toBe('account');
  });
});

/** A clock that runs: sleepers wake when it reaches their time, as `run` moves it on in 10 ms steps. */
function timeline() {
  let now = 1_000_000;
  const sleepers: { at: number; wake: () => void }[] = [];
  return {
    now: () => now,
    sleep: (ms: number) => new Promise<void>((wake) => sleepers.push({ at: now + ms, wake })),
    async run(ms: number) {
      for (const end = now + ms; now < end;) {
        now += 10;
        for (const s of sleepers.filter((x) => x.at <= now)) {
          sleepers.splice(sleepers.indexOf(s), 1);
          s.wake();
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
  };
}

describe('the request budget paced by CCXT rateLimit (exchanges without a table of windows: Binance spot)', () => {
  it("the reconciliation's heavy read (Binance spot's open orders without a symbol: 16, all a second leaves the background) goes out while quote reads keep coming", async () => {
    const t = timeline();
    const budget = new RequestBudget(windowsOfPace(50), t.now, t.sleep);
    let polling = true;
    // A quote read every 400 ms, as the held quotes are kept fresh.
    const poller = (async () => {
      while (polling) {
        await budget.take({ weight: 1, placesOrder: false, kind: 'background' });
        await t.sleep(400);
      }
    })();
    await t.run(100);
    // The account read (4) and the open orders (16), together as the reconciliation sends them.
    let sentAt: number | null = null;
    void Promise.all([
      budget.take({ weight: 4, placesOrder: false, kind: 'background' }),
      budget.take({ weight: 16, placesOrder: false, kind: 'background' }),
    ]).then(() => (sentAt = t.now()));
    await t.run(10_000);
    polling = false;
    await t.run(1000);
    await poller;
    expect(sentAt, 'the heavy read starved by the light ones').not.toBeNull();
    expect(sentAt! - 1_000_100).toBeLessThan(3000);
  });
});
