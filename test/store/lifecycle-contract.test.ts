import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackupError } from '../../src/store/backup-error.js';
import type { Store } from '../../src/store/store.js';
import { contractStores, request, seed, type StoreHarness } from './store-harness.js';

/** The store contract for the store's own lifecycle, run unchanged against both implementations. */
describe.each(contractStores('contract_lifecycle'))('$name store', ({ name, harness: makeHarness }) => {
  let harness: StoreHarness;
  let store: Store;

  beforeAll(async () => {
    harness = await makeHarness();
    store = await harness.open();
  });

  afterAll(async () => {
    await store?.close();
    await harness?.dispose();
  });

  describe('backup', () => {
    it('writes a copy that holds what was committed (SQLite), or names pg_dump (PostgreSQL), and never overwrites a file', async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-contract-backup-'));
      try {
        const seeded = await seed(store, { agents: 1 });
        const outcome = await store.ingest.commit(request(seeded));
        const file = path.join(dir, 'copy.db');
        if (name === 'postgres') {
          await expect(store.backup(file)).rejects.toThrow(/pg_dump/);
          expect(existsSync(file)).toBe(false);
          return;
        }
        await store.backup(file);
        const copy = new Database(file, { readonly: true });
        try {
          expect(copy.prepare('SELECT id FROM signals WHERE id = ?').get(outcome.record.id)).toEqual({
            id: outcome.record.id,
          });
        } finally {
          copy.close();
        }
        await expect(store.backup(file)).rejects.toThrow(BackupError);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
