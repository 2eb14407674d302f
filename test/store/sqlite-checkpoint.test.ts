import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { SQLITE_FILE_NAME, type SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { at, request, seed, sqliteHarness, type StoreHarness } from './store-harness.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * The server's SQLite store (a CLI command's keeps SQLite's automatic checkpoint) copies the WAL into the database file on a thread of its own: no
 * COMMIT of a request runs a checkpoint (SQLite's automatic one is off on its connection), and
 * yet what is committed reaches the database file while the store stays open, so the WAL does
 * not grow without end.
 */
describe('SQLite checkpoints off the request path', () => {
  it('turns the checkpoint at COMMIT off and copies committed signals into the database file while open', async () => {
    const harness: StoreHarness & { dataDir: string } = await sqliteHarness();
    cleanups.push(() => harness.dispose());
    // As the server opens it.
    const store: Store = await openStore({ dataDir: harness.dataDir, checkpointThread: true });
    cleanups.push(() => store.close());
    expect((store as SqliteStore).pragma('wal_autocheckpoint')).toBe(0);

    const seeded = await seed(store, { quota: 100_000 });
    const file = join(harness.dataDir, SQLITE_FILE_NAME);
    const before = statSync(file).size;
    // About 8 MB of signals: well past the 1,000 pages at which a COMMIT would have checkpointed.
    const body = 'x'.repeat(4000);
    for (let batch = 0; batch < 20; batch++) {
      await Promise.all(
        Array.from({ length: 100 }, (_, k) => store.ingest(request(seeded, { id: `sig-${batch}-${k}`, rawBody: body, receivedAt: at(batch * 1000 + k) }))),
      );
    }
    // The checkpoint thread copies them into the database file within a few of its turns (a
    // generous guard: on a loaded machine the thread and the disk are shared).
    const deadline = Date.now() + 45_000;
    while (statSync(file).size < before + 7_000_000 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(statSync(file).size).toBeGreaterThanOrEqual(before + 7_000_000);
    // And the WAL is written again from its start once everything in it is copied: each restart
    // counts up the checkpoint sequence number in the WAL's header (bytes 12-15).
    const restarts = () => readFileSync(`${file}-wal`).subarray(0, 32).readUInt32BE(12);
    const first = restarts();
    for (let k = 0, until = Date.now() + 45_000; restarts() === first && Date.now() < until; k++) {
      await store.ingest(request(seeded, { id: `sig-after-${k}`, receivedAt: at(60_000 + k) }));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(restarts()).toBeGreaterThan(first);
  });
});
