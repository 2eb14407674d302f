import { describe, expect, it, vi } from 'vitest';
import { OutcomeUnknownError } from '../../src/store/outcome-unknown.js';
import type { ItemResult } from '../../src/store/item-result.js';
import { GroupCommit, RECOVER_EVERY_MS } from '../../src/store/sqlite/group-commit.js';
import { isStoreUnavailable } from '../../src/store/store-unavailable.js';

/** A disk whose syncs finish when the test says so. */
function controlledDisk() {
  const pending: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  return {
    pending,
    sync: () => new Promise<void>((resolve, reject) => pending.push({ resolve, reject })),
  };
}

/** A transaction that commits every item as it came. */
function committedAsSent<T>(items: T[]): ItemResult<T>[] {
  return items.map((item) => ({ ok: true, value: item }));
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** A group with overlapping syncs on a controlled disk, recording each batch it commits. */
function overlappingGroup() {
  const disk = controlledDisk();
  const batches: number[][] = [];
  const group = new GroupCommit<number, number>(
    (items) => {
      batches.push(items);
      return committedAsSent(items);
    },
    disk.sync,
    { overlapSyncs: true },
  );
  return { disk, batches, group };
}

describe('group commit', () => {
  it('answers a batch only once the disk has it, and commits the next batch only after that', async () => {
    const disk = controlledDisk();
    const batches: number[][] = [];
    const group = new GroupCommit<number, number>((items) => {
      batches.push(items);
      return items.map((item): ItemResult<number> => ({ ok: true, value: item * 10 }));
    }, disk.sync);
    const settled: number[] = [];
    const first = [1, 2, 3].map((n) => group.submit(n).then((v) => settled.push(v)));
    await turn();
    expect(batches).toEqual([[1, 2, 3]]);
    expect(disk.pending).toHaveLength(1);

    const second = [4, 5].map((n) => group.submit(n).then((v) => settled.push(v)));
    await turn();
    await turn();
    // Committed but not durable: nobody answered, and the next batch waits.
    expect(settled).toEqual([]);
    expect(batches).toHaveLength(1);

    disk.pending[0]!.resolve();
    await Promise.all(first);
    expect(settled).toEqual([10, 20, 30]);
    await turn();
    expect(batches).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
    disk.pending[1]!.resolve();
    await Promise.all(second);
    expect(settled).toEqual([10, 20, 30, 40, 50]);
  });

  it('lets readers in after a batch is durable and before the next one commits', async () => {
    const disk = controlledDisk();
    const events: string[] = [];
    const group = new GroupCommit<string, string>((items) => {
      events.push(`commit ${items.join(',')}`);
      return items.map((item): ItemResult<string> => ({ ok: true, value: item }));
    }, disk.sync);
    void group.submit('a');
    await turn();
    void group.submit('b');
    const read = group.whenDurable().then(() => events.push('read'));
    disk.pending[0]!.resolve();
    await read;
    await turn();
    expect(events).toEqual(['commit a', 'read', 'commit b']);
    disk.pending[1]!.resolve();
    await group.drain();
  });

  it('fails the batch as of unknown outcome, and everything queued and after it plainly, when the disk cannot sync', async () => {
    const disk = controlledDisk();
    const group = new GroupCommit<number, number>(committedAsSent, disk.sync);
    const first = group.submit(1);
    await turn();
    const queued = group.submit(2);
    disk.pending[0]!.reject(new Error('EIO: fdatasync'));
    // The batch committed and may be on disk or not: neither stored nor refused.
    await expect(first).rejects.toThrow(OutcomeUnknownError);
    await expect(first).rejects.toThrow('EIO');
    // Queued behind it, never committed: refused as unavailable (a retry is safe).
    await expect(queued).rejects.not.toThrow(OutcomeUnknownError);
    await expect(queued).rejects.toThrow('EIO');
    await expect(group.submit(3)).rejects.not.toThrow(OutcomeUnknownError);
    await expect(group.submit(3)).rejects.toThrow('EIO');
    await expect(group.whenDurable()).rejects.toThrow('EIO');
    expect(disk.pending).toHaveLength(1);
  });

  it('after a failed sync, refuses as unavailable until a recovery (a synced checkpoint) succeeds, then commits again', async () => {
    // The clock moves only when the test says: a loaded machine that paused this process for a
    // second between two steps would otherwise let a recovery in where the test expects none.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      await failedSyncThenRecovery();
    } finally {
      vi.useRealTimers();
    }
  });

  async function failedSyncThenRecovery(): Promise<void> {
    const disk = controlledDisk();
    let full = true;
    let recoveries = 0;
    const group = new GroupCommit<number, number>(committedAsSent, disk.sync, {
      recover: () => {
        recoveries++;
        if (full) throw new Error('SQLITE_FULL: database or disk is full');
      },
    });
    const first = group.submit(1);
    await turn();
    disk.pending[0]!.reject(Object.assign(new Error('ENOSPC: no space left on device, fdatasync'), { code: 'ENOSPC' }));
    await expect(first).rejects.toThrow(OutcomeUnknownError);
    const refused = await group.submit(2).catch((error: unknown) => error);
    expect(isStoreUnavailable(refused)).toBe(true);
    expect(String(refused)).toContain('ENOSPC');
    const pause = () => vi.setSystemTime(Date.now() + RECOVER_EVERY_MS + 100);
    pause();
    expect(isStoreUnavailable(await group.submit(3).catch((error: unknown) => error))).toBe(true);
    expect(recoveries).toBe(1);
    // Space freed: the next item after a second recovers and is committed and synced as ever.
    full = false;
    pause();
    const fourth = group.submit(4);
    await turn();
    expect(recoveries).toBe(2);
    expect(disk.pending).toHaveLength(2);
    disk.pending[1]!.resolve();
    await expect(fourth).resolves.toBe(4);
    await expect(group.whenDurable()).resolves.toBeUndefined();
  }

  it('fails only the batch whose transaction threw, and goes on with the next', async () => {
    const disk = controlledDisk();
    let calls = 0;
    const group = new GroupCommit<number, number>((items) => {
      if (calls++ === 0) throw new Error('SQLITE_BUSY');
      return items.map((item): ItemResult<number> => ({ ok: true, value: item }));
    }, disk.sync);
    await expect(group.submit(1)).rejects.toThrow('SQLITE_BUSY');
    const next = group.submit(2);
    await turn();
    disk.pending[0]!.resolve();
    await expect(next).resolves.toBe(2);
  });

  it('fails an item its committed batch gave no result for as of unknown outcome', async () => {
    const disk = controlledDisk();
    const group = new GroupCommit<number, number>((items) => committedAsSent(items).slice(0, 1), disk.sync);
    const answered = group.submit(1);
    const lost = group.submit(2);
    await turn();
    disk.pending[0]!.resolve();
    await expect(answered).resolves.toBe(1);
    await expect(lost).rejects.toThrow(OutcomeUnknownError);
  });

  it('drains: commits what is queued and waits for the disk', async () => {
    const disk = controlledDisk();
    const group = new GroupCommit<number, number>(committedAsSent, disk.sync);
    const item = group.submit(7);
    let drained = false;
    const draining = group.drain().then(() => (drained = true));
    await turn();
    expect(drained).toBe(false);
    disk.pending[0]!.resolve();
    await draining;
    await expect(item).resolves.toBe(7);
  });

  it('tries a batch that found the write lock held again on a later turn, and fails it once the retry time ran out', async () => {
    const busy = Object.assign(new Error('database is locked'), { busy: true });
    const isBusy = (error: unknown) => (error as { busy?: boolean }).busy === true;
    let lockedFor = 3;
    const tries: number[][] = [];
    const group = new GroupCommit<number, number>(
      (items) => {
        tries.push(items);
        if (lockedFor-- > 0) throw busy;
        return committedAsSent(items);
      },
      async () => undefined,
      { busy: { isBusy, retryForMs: 60_000 } },
    );
    const first = group.submit(1);
    await turn();
    const second = group.submit(2);
    expect(await Promise.all([first, second])).toEqual([1, 2]);
    // The batch kept its place at the head, with what came meanwhile behind it.
    expect(tries[0]).toEqual([1]);
    expect(tries[tries.length - 1]).toEqual([1, 2]);

    const never = new GroupCommit<number, number>(
      () => {
        throw busy;
      },
      async () => undefined,
      { busy: { isBusy, retryForMs: 20 } },
    );
    await expect(never.submit(3)).rejects.toBe(busy);
  });
  it('with overlapping syncs, commits the next batch while the previous one syncs, and answers in commit order', async () => {
    const { disk, batches, group } = overlappingGroup();
    const settled: number[] = [];
    const first = group.submit(1).then((value) => settled.push(value));
    await turn();
    const second = group.submit(2).then((value) => settled.push(value));
    await turn();
    // Both committed, each waiting for its own sync.
    expect(batches).toEqual([[1], [2]]);
    expect(disk.pending).toHaveLength(2);
    // The later sync finishing first answers nothing before the earlier batch is durable.
    disk.pending[1]!.resolve();
    await turn();
    expect(settled).toEqual([]);
    disk.pending[0]!.resolve();
    await Promise.all([first, second]);
    expect(settled).toEqual([1, 2]);
  });

  it('with overlapping syncs, a failed earlier sync leaves the batches committed after it of unknown outcome', async () => {
    const disk = controlledDisk();
    const group = new GroupCommit<number, number>(committedAsSent, disk.sync, { overlapSyncs: true });
    const first = group.submit(1);
    await turn();
    const second = group.submit(2);
    await turn();
    expect(disk.pending).toHaveLength(2);
    disk.pending[1]!.resolve();
    disk.pending[0]!.reject(new Error('EIO: fdatasync'));
    await expect(first).rejects.toThrow(OutcomeUnknownError);
    await expect(second).rejects.toThrow(OutcomeUnknownError);
    const after = await group.submit(3).catch((error: unknown) => error);
    expect(isStoreUnavailable(after)).toBe(true);
  });

  it('commits writes submitted soon once the promise jobs of their callback have run, together, before the turn ends', async () => {
    const { disk, batches, group } = overlappingGroup();
    let turnEnded = false;
    setImmediate(() => (turnEnded = true));
    // A write of the turn, then three woken by one event, each a few promise jobs deep.
    void group.submit(1);
    const woken = [2, 3, 4].map(async (n) => {
      await Promise.resolve();
      await Promise.resolve();
      return group.submit(n, true);
    });
    await Promise.resolve();
    await new Promise((resolve) => queueMicrotask(() => resolve(undefined)));
    await new Promise((resolve) => queueMicrotask(() => resolve(undefined)));
    await new Promise((resolve) => queueMicrotask(() => resolve(undefined)));
    expect(turnEnded).toBe(false);
    expect(batches).toEqual([[1, 2, 3, 4]]);
    // What comes later in the turn waits for its end, as before.
    void group.submit(5);
    await turn();
    expect(batches).toEqual([[1, 2, 3, 4], [5]]);
    disk.pending.forEach((sync) => sync.resolve());
    await Promise.all(woken);
    disk.pending.forEach((sync) => sync.resolve());
    await group.drain();
  });

  it('without overlapping syncs, a write submitted soon does not commit while a sync that began meanwhile is under way', async () => {
    const disk = controlledDisk();
    const batches: number[][] = [];
    const group = new GroupCommit<number, number>((items) => {
      batches.push(items);
      return committedAsSent(items);
    }, disk.sync);
    const first = group.submit(1, true);
    // Before the soon commit's promise job runs, a drain commits 1 and starts its sync; 2 queues behind it.
    const drained = group.drain();
    const second = group.submit(2, true);
    await Promise.resolve();
    await Promise.resolve();
    expect(batches).toEqual([[1]]);
    expect(disk.pending).toHaveLength(1);
    disk.pending[0]!.resolve();
    await expect(first).resolves.toBe(1);
    await turn();
    expect(batches).toEqual([[1], [2]]);
    disk.pending[1]!.resolve();
    await expect(second).resolves.toBe(2);
    await drained;
  });
});
