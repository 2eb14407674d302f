import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { readMigrationFiles } from '../../src/store/migration-files.js';
import { openStore } from '../../src/store/open-store.js';
import { TEST_DATABASE_URL, freshPostgresSchema } from '../support/postgres.js';

/**
 * Sources keep the digest of their key and its first characters, never the key: a store made
 * before that is migrated so that its keys still work and are no longer in it.
 */

const KEY = 'Zq7vKey-kept-in-clear-before-016x';
const DIGEST = createHash('sha256').update(KEY).digest('hex');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const SOURCE_ROW = `INSERT INTO sources (id, account_id, name, auth_key, auth_key_hash, active, max_signal_age_seconds, created_at)
                    VALUES ('src-old', 'acc-old', 'old', '${KEY}', '${DIGEST}', ${'$ACTIVE'}, 120, '2030-01-01T00:00:00.000Z')`;

describe('source keys made before the digests', () => {
  it('on SQLite: the migration keeps the digest and a 4-character hint, the key still works, and the file no longer holds it', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'signalgate-key-digests-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const file = path.join(dataDir, 'signalgate.db');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec(
      'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT',
    );
    for (const migration of readMigrationFiles('sqlite').filter((m) => m.version < 16)) {
      db.exec(migration.sql);
      db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(
        migration.version,
        migration.name,
        new Date().toISOString(),
      );
    }
    db.exec("INSERT INTO accounts VALUES ('acc-old', 'Desk', 100, '2030-01-01T00:00:00.000Z')");
    db.exec(SOURCE_ROW.replace('$ACTIVE', '1'));
    db.close();
    expect(readFileSync(file).includes(KEY)).toBe(true);

    const store = await openStore({ dataDir });
    const found = await store.sources.findByAuthKey(KEY);
    expect(found).toMatchObject({ id: 'src-old', authKeyHash: DIGEST, authKeyHint: 'Zq7v' });
    expect(await store.sources.get('src-old')).toEqual(found);
    await store.close();

    const after = new Database(file);
    const columns = (after.prepare('PRAGMA table_info(sources)').all() as { name: string }[]).map((c) => c.name);
    after.close();
    expect(columns).not.toContain('auth_key');
    expect(columns).toContain('auth_key_hint');
    expect(readFileSync(file).includes(KEY)).toBe(false);
  });

  it('on PostgreSQL: the migration keeps the digest and a 4-character hint, the key still works, and no column holds it', async () => {
    const schema = await freshPostgresSchema('key_digests');
    cleanups.push(() => schema.drop());
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${schema.schema}` });
    await client.connect();
    try {
      await client.query(
        'CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      for (const migration of readMigrationFiles('postgres').filter((m) => m.version < 18)) {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
          migration.version,
          migration.name,
        ]);
      }
      await client.query("INSERT INTO accounts VALUES ('acc-old', 'Desk', 100, now())");
      await client.query(SOURCE_ROW.replace('$ACTIVE', 'true'));
    } finally {
      await client.end();
    }

    const store = await openStore({
      dataDir: '/nonexistent',
      databaseUrl: schema.connectionString,
      schema: schema.schema,
    });
    try {
      const found = await store.sources.findByAuthKey(KEY);
      expect(found).toMatchObject({ id: 'src-old', authKeyHash: DIGEST, authKeyHint: 'Zq7v' });
      expect(await store.sources.get('src-old')).toEqual(found);
    } finally {
      await store.close();
    }
    const reader = new pg.Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${schema.schema}` });
    await reader.connect();
    try {
      const { rows } = await reader.query<{ row: string }>('SELECT row_to_json(s)::text AS row FROM sources s');
      expect(rows).toHaveLength(1);
      expect(rows[0]!.row).not.toContain(KEY);
      expect(JSON.parse(rows[0]!.row)).toMatchObject({ auth_key_hint: 'Zq7v', auth_key_hash: DIGEST });
    } finally {
      await reader.end();
    }
  });
});
