import { describe, expect, it } from 'vitest';
import { CoalescedSync } from '../../src/store/sqlite/coalesced-sync.js';

/** A disk whose syncs finish when the test says so. */
function controlledDisk() {
  const pending: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  return {
    pending,
    sync: () => new Promise<void>((resolve, reject) => pending.push({ resolve, reject })),
  };
}

const settledNow = async (promise: Promise<unknown>): Promise<boolean> => {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
};

describe('coalesced sync', () => {
  it('answers a call made during a sync only after a sync begun after it, one shared by every such call', async () => {
    const disk = controlledDisk();
    const shared = new CoalescedSync(disk.sync);
    const first = shared.sync();
    expect(disk.pending).toHaveLength(1);

    // Committed while the first sync is under way: that sync may not hold their writes.
    const second = shared.sync();
    const third = shared.sync();
    expect(disk.pending).toHaveLength(1);

    disk.pending[0]!.resolve();
    await first;
    expect(await settledNow(second)).toBe(false);
    expect(await settledNow(third)).toBe(false);
    // One more sync, begun after both calls, serves the two.
    expect(disk.pending).toHaveLength(2);

    disk.pending[1]!.resolve();
    await Promise.all([second, third]);
    expect(disk.pending).toHaveLength(2);

    // Nothing under way: a call starts its own sync at once.
    const fourth = shared.sync();
    expect(disk.pending).toHaveLength(3);
    disk.pending[2]!.resolve();
    await fourth;
  });

  it('fails the callers of a failed sync, and still syncs for those who came during it', async () => {
    const disk = controlledDisk();
    const shared = new CoalescedSync(disk.sync);
    const first = shared.sync();
    const second = shared.sync();
    disk.pending[0]!.reject(new Error('ENOSPC'));
    await expect(first).rejects.toThrow('ENOSPC');
    expect(await settledNow(second)).toBe(false);
    expect(disk.pending).toHaveLength(2);
    disk.pending[1]!.reject(new Error('EIO'));
    await expect(second).rejects.toThrow('EIO');
  });
});
