import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WorkLanes } from '../../src/agent/work-lanes.js';

/** A promise with its resolve, to finish work items when the test says. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('work lanes', () => {
  it('runs different symbols side by side while one symbol waits for its earlier item', async () => {
    const lanes = new WorkLanes(8);
    const started: string[] = [];
    const slow = gate();
    void lanes.lane('BTC', async () => {
      started.push('BTC 1');
      await slow.promise;
    });
    const second = lanes.lane('BTC', async () => {
      started.push('BTC 2');
    });
    const eth = lanes.lane('ETH', async () => {
      started.push('ETH 1');
      return 'eth done';
    });
    await expect(eth).resolves.toBe('eth done');
    expect(started).toEqual(['BTC 1', 'ETH 1']);
    slow.open();
    await second;
    expect(started).toEqual(['BTC 1', 'ETH 1', 'BTC 2']);
  });

  it('account-wide work waits for the lanes before it and holds the lanes after it', async () => {
    const lanes = new WorkLanes(8);
    const log: string[] = [];
    const btc = gate();
    const whole = gate();
    void lanes.lane('BTC', async () => {
      log.push('BTC start');
      await btc.promise;
      log.push('BTC end');
    });
    const pass = lanes.whole(async () => {
      log.push('whole start');
      await whole.promise;
      log.push('whole end');
    });
    const eth = lanes.lane('ETH', async () => void log.push('ETH'));
    await turn();
    expect(log).toEqual(['BTC start']);
    btc.open();
    await turn();
    expect(log).toEqual(['BTC start', 'BTC end', 'whole start']);
    whole.open();
    await Promise.all([pass, eth]);
    expect(log).toEqual(['BTC start', 'BTC end', 'whole start', 'whole end', 'ETH']);
    await lanes.whenIdle();
    expect(lanes.size).toBe(0);
  });

  it('keeps at most `concurrency` items running, and a failing item neither stops its lane nor the others', async () => {
    const lanes = new WorkLanes(2);
    let running = 0;
    let most = 0;
    const items = ['A', 'B', 'C', 'D', 'A'].map((key, i) =>
      lanes.lane(key, async () => {
        running += 1;
        most = Math.max(most, running);
        await turn();
        running -= 1;
        if (i === 0) throw new Error('refused');
        return i;
      }),
    );
    const settled = await Promise.allSettled(items);
    expect(most).toBe(2);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
  });

  it('refuses a concurrency below one', () => {
    expect(() => new WorkLanes(0)).toThrow(/concurrency must be a whole number >= 1, got 0/);
  });

  it('property: each symbol keeps its order, and account-wide work never overlaps anything', async () => {
    const item = fc.record({
      key: fc.option(fc.constantFrom('A', 'B', 'C', 'D'), { nil: null, freq: 5 }),
      turns: fc.nat(3),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(item, { maxLength: 40 }), fc.integer({ min: 1, max: 4 }), async (items, limit) => {
        const lanes = new WorkLanes(limit);
        const running = new Set<number>();
        const order: Record<string, number[]> = {};
        let wholeAt = -1;
        const problems: string[] = [];
        await Promise.all(
          items.map(({ key, turns }, index) => {
            const work = async () => {
              if (key === null) {
                if (running.size > 0) problems.push(`account-wide ${index} began beside ${[...running].join(',')}`);
                wholeAt = index;
              } else {
                if (wholeAt !== -1) problems.push(`${index} began during account-wide ${wholeAt}`);
                (order[key] ??= []).push(index);
                if (running.size >= limit) problems.push(`${index} began beyond the limit`);
              }
              running.add(index);
              for (let t = 0; t < turns; t += 1) await turn();
              running.delete(index);
              if (key === null) wholeAt = -1;
            };
            return key === null ? lanes.whole(work) : lanes.lane(key, work);
          }),
        );
        // Account-wide items split the queue: whatever came before one ran before it.
        for (const [i, it] of items.entries()) {
          if (it.key !== null) continue;
          for (const [key, seen] of Object.entries(order)) {
            const before = items.flatMap((x, j) => (j < i && x.key === key ? [j] : []));
            expect(seen.slice(0, before.length)).toEqual(before);
          }
        }
        expect(problems).toEqual([]);
        for (const seen of Object.values(order)) expect(seen).toEqual([...seen].sort((a, b) => a - b));
      }),
      { numRuns: 150 },
    );
  });
});
