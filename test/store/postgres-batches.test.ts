import { describe, expect, it } from 'vitest';
import type { ItemResult } from '../../src/store/item-result.js';
import { Batches } from '../../src/store/postgres/batches.js';

interface Item {
  key: string;
  value: number;
}

/** A runner whose batches finish when the test says so. */
function manual() {
  const calls: { items: Item[]; finish: (results?: ItemResult<number>[]) => void; fail: (error: unknown) => void }[] =
    [];
  const run = (items: Item[]) =>
    new Promise<ItemResult<number>[]>((resolve, reject) => {
      calls.push({
        items,
        finish: (results) => resolve(results ?? items.map((item) => ({ ok: true, value: item.value * 10 }))),
        fail: reject,
      });
    });
  return { calls, run };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('PostgreSQL ingest batches', () => {
  it('sends the items of one event-loop turn as one batch, in order, and answers each', async () => {
    const { calls, run } = manual();
    const batches = new Batches(run, { maxBatch: 50, maxInFlight: 4, keyOf: (item) => item.key });
    const answers = [1, 2, 3].map((value) => batches.submit({ key: value === 2 ? 'b' : 'a', value }));
    await turn();
    expect(calls.map((c) => c.items.map((i) => i.value))).toEqual([[1, 2, 3]]);
    calls[0]!.finish();
    expect(await Promise.all(answers)).toEqual([10, 20, 30]);
    await batches.drained();
  });

  it('never has two batches with the same key in flight; the held items leave together, in order', async () => {
    const { calls, run } = manual();
    const batches = new Batches(run, { maxBatch: 50, maxInFlight: 4, keyOf: (item) => item.key });
    const first = batches.submit({ key: 'a', value: 1 });
    await turn();
    const later = [
      batches.submit({ key: 'a', value: 2 }),
      batches.submit({ key: 'b', value: 3 }),
      batches.submit({ key: 'a', value: 4 }),
    ];
    await turn();
    // 'b' is free and leaves at once; 'a' waits for its batch in flight.
    expect(calls.map((c) => c.items.map((i) => i.value))).toEqual([[1], [3]]);
    batches.submit({ key: 'a', value: 5 }).catch(() => undefined);
    await turn();
    expect(calls).toHaveLength(2);
    calls[0]!.finish();
    expect(await first).toBe(10);
    await turn();
    expect(calls.map((c) => c.items.map((i) => i.value))).toEqual([[1], [3], [2, 4, 5]]);
    calls[1]!.finish();
    calls[2]!.finish();
    expect(await Promise.all(later)).toEqual([20, 30, 40]);
    await batches.drained();
  });

  it('holds items without a key back only for lack of a free slot, and splits at maxBatch', async () => {
    const { calls, run } = manual();
    const batches = new Batches(run, { maxBatch: 2, maxInFlight: 2 });
    const answers = [1, 2, 3, 4, 5].map((value) => batches.submit({ key: 'x', value }));
    await turn();
    expect(calls.map((c) => c.items.map((i) => i.value))).toEqual([
      [1, 2],
      [3, 4],
    ]);
    calls[1]!.finish();
    await answers[3];
    await turn();
    expect(calls.map((c) => c.items.map((i) => i.value))).toEqual([[1, 2], [3, 4], [5]]);
    calls[0]!.finish();
    calls[2]!.finish();
    expect(await Promise.all(answers)).toEqual([10, 20, 30, 40, 50]);
  });

  it('fails each item on its own result, and every item of a batch that throws', async () => {
    const { calls, run } = manual();
    const batches = new Batches(run, { maxBatch: 50, maxInFlight: 1, keyOf: (item) => item.key });
    const one = [batches.submit({ key: 'a', value: 1 }), batches.submit({ key: 'a', value: 2 })];
    await turn();
    calls[0]!.finish([
      { ok: true, value: 1 },
      { ok: false, error: new Error('item two') },
    ]);
    const [ok, failed] = await Promise.allSettled(one);
    expect(ok).toEqual({ status: 'fulfilled', value: 1 });
    expect(failed?.status === 'rejected' && (failed.reason as Error).message).toBe('item two');

    const two = [batches.submit({ key: 'a', value: 3 }), batches.submit({ key: 'b', value: 4 })];
    await turn();
    calls[1]!.fail(new Error('connection lost'));
    for (const result of await Promise.allSettled(two)) {
      expect(result.status === 'rejected' && (result.reason as Error).message).toBe('connection lost');
    }
    // The key is free again after a failure.
    const three = batches.submit({ key: 'a', value: 5 });
    await turn();
    calls[2]!.finish();
    expect(await three).toBe(50);
  });

  it('is drained only once nothing is queued or in flight', async () => {
    const { calls, run } = manual();
    const batches = new Batches(run, { maxBatch: 50, maxInFlight: 1, keyOf: (item) => item.key });
    const answers = [batches.submit({ key: 'a', value: 1 })];
    await turn();
    answers.push(batches.submit({ key: 'a', value: 2 }));
    let drained = false;
    const done = batches.drained().then(() => (drained = true));
    calls[0]!.finish();
    await turn();
    await turn();
    expect(drained).toBe(false);
    calls[1]!.finish();
    await done;
    expect(await Promise.all(answers)).toEqual([10, 20]);
  });
});
