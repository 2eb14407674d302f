import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestItem, type IngestAnswer } from '../../src/store/postgres/ingest-call.js';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SourceChangedError } from '../../src/store/source-changed.js';
import { freshPostgresSchema, TEST_DATABASE_URL, withMigratedStore, type TestSchema } from '../support/postgres.js';
import { PERIOD, request, seed } from './store-harness.js';

/**
 * The PostgreSQL migration history: a database migrated from empty, and one migrated by the
 * files of an earlier release up to each released version and then upgraded, end with the same
 * schema and the same functions, and ingest by today's rules.
 */

/** The migration files as released at commit 96e82a4 (before the functions had one file). */
const RELEASED_DIRECTORY = fileURLToPath(new URL('../fixtures/postgres-migrations-96e82a4/', import.meta.url));
const RELEASED = readdirSync(RELEASED_DIRECTORY)
  .filter((name) => /^\d+_.*\.sql$/.test(name))
  .sort()
  .map((name) => ({
    version: Number(name.slice(0, 3)),
    name: name.slice(4, -'.sql'.length),
    sql: readFileSync(RELEASED_DIRECTORY + name, 'utf8'),
  }));

async function withClient<T>(schema: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The deliveries table's indexes and constraints, without the schema's name. */
function deliveriesShape(schema: string): Promise<string[][]> {
  return withClient(schema, async (client) => [
    (
      await client.query<{ d: string }>(
        "SELECT regexp_replace(indexdef, ' ON \\S+', ' ON') AS d FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'deliveries' ORDER BY indexname",
      )
    ).rows.map((row) => row.d),
    (
      await client.query<{ d: string }>(
        "SELECT conname || ' ' || regexp_replace(pg_get_constraintdef(oid), '\\S+\\.', '') AS d FROM pg_constraint WHERE conrelid = 'deliveries'::regclass ORDER BY conname",
      )
    ).rows.map((row) => row.d),
  ]);
}

/** What the released migrate did, with the released files up to `version`. */
async function migrateAsReleased(schema: string, version: number): Promise<void> {
  await withClient(schema, async (client) => {
    await client.query(
      `CREATE TABLE schema_migrations (
         version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    for (const file of RELEASED.filter((f) => f.version <= version)) {
      await client.query('BEGIN');
      await client.query(file.sql);
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [file.version, file.name]);
      await client.query('COMMIT');
    }
  });
}

/** Everything migrations define in `schema`, with the schema's name taken out. */
async function schemaShape(schema: string): Promise<unknown> {
  return withClient(schema, async (client) => {
    const rows = async (sql: string) =>
      JSON.parse(
        JSON.stringify((await client.query(sql, sql.includes('$1') ? [schema] : [])).rows).replaceAll(
          schema,
          '<schema>',
        ),
      ) as unknown;
    return {
      columns: await rows(
        `SELECT table_name, column_name, data_type, is_nullable, column_default, collation_name
           FROM information_schema.columns WHERE table_schema = $1 AND table_name <> 'schema_migrations'
          ORDER BY table_name, ordinal_position`,
      ),
      constraints: await rows(
        `SELECT c.relname, con.conname, pg_get_constraintdef(con.oid) AS def
           FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = $1 ORDER BY 1, 2`,
      ),
      indexes: await rows(`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname`),
      itemType: await rows(
        `SELECT a.attname, format_type(a.atttypid, a.atttypmod) AS type
           FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace JOIN pg_attribute a ON a.attrelid = t.typrelid
          WHERE n.nspname = $1 AND t.typname = 'signalgate_ingest_item' AND a.attnum > 0 AND NOT a.attisdropped
          ORDER BY a.attnum`,
      ),
      functions: await rows(
        `SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS args, p.prosrc, obj_description(p.oid, 'pg_proc') AS comment
           FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 ORDER BY 1, 2`,
      ),
      migrations: await rows('SELECT version, name FROM schema_migrations ORDER BY version'),
    };
  });
}

/** Today's ingest rules, on `store`: each was added by one of the released migrations. */
async function ingestsByTodaysRules(store: PostgresStore, schema: string): Promise<void> {
  const seeded = await seed(store, { agents: 1 });
  const keyed = request(seeded, { idempotencyKey: 'k1', requestHash: 'h1' });
  const first = await store.ingest.commit(keyed);
  expect(first).toMatchObject({ kind: 'recorded', record: { status: 'accepted', quota: { period: PERIOD, used: 1 } } });
  expect(await store.deliveries.take(seeded.agents[0]!.id, keyed.receivedAt, 10)).toEqual([
    expect.objectContaining({ id: keyed.id, seq: 1 }),
  ]);
  expect(await store.ingest.commit(request(seeded, { idempotencyKey: 'k1', requestHash: 'h1' }))).toMatchObject({
    kind: 'replay',
    record: { id: keyed.id },
  });
  // 003: a different request under a held key is logged as its own refusal.
  const reused = request(seeded, { idempotencyKey: 'k1', requestHash: 'other' });
  expect(await store.ingest.commit(reused)).toMatchObject({ kind: 'key_reused', originalId: keyed.id });
  expect(await store.signals.get(reused.id)).toMatchObject({ status: 'rejected', httpStatus: 422 });
  // 005: a request checked against an earlier revision of its source is not recorded.
  const changed = await store.sources.update(seeded.source.id, { name: 'renamed' }, new Date().toISOString());
  const stale = request(seeded);
  await expect(store.ingest.commit(stale)).rejects.toBeInstanceOf(SourceChangedError);
  expect(await store.signals.get(stale.id)).toBeNull();
  expect(await store.ingest.commit(request(seeded, { sourceRevision: changed!.revision }))).toMatchObject({
    kind: 'recorded',
  });
  // An instance of the previous release, mid rolling upgrade, sends items without a revision.
  const { source_revision: _omitted, ...older } = ingestItem(request(seeded), 0);
  const answers = await withClient(schema, async (client) => {
    const { rows } = await client.query<{ r: IngestAnswer[] }>('SELECT signalgate_ingest($1, $2, $3, false) AS r', [
      JSON.stringify([older]),
      schema,
      'an-older-instance',
    ]);
    return rows[0]!.r;
  });
  expect(answers).toEqual([expect.objectContaining({ n: 0, ok: true, kind: 'recorded', charged: true })]);
  // One of the release before 007 also sends no symbol (nor the duplicate guard's fields): the
  // symbol filter still finds what it ingested.
  const beforeSymbols = request(seeded);
  const {
    source_revision: _r,
    symbol: _s,
    body_digest: _b,
    duplicate_since: _d,
    ...oldest
  } = ingestItem(beforeSymbols, 0);
  await withClient(schema, (client) =>
    client.query('SELECT signalgate_ingest($1, $2, $3, false)', [
      JSON.stringify([oldest]),
      schema,
      'an-older-instance',
    ]),
  );
  const found = await store.signals.list({ sourceId: seeded.source.id, symbol: 'EURUSD', limit: 100 });
  expect(found.signals.map((signal) => signal.id)).toContain(beforeSymbols.id);
}

describe('PostgreSQL migrations', () => {
  let fromEmpty: TestSchema;
  let expected: unknown;

  beforeAll(async () => {
    fromEmpty = await freshPostgresSchema('mig_empty');
  });
  afterAll(() => fromEmpty.drop());

  it('migrates an empty schema and ingests a signal', async () => {
    const store = openPostgresStore({ connectionString: fromEmpty.connectionString, schema: fromEmpty.schema });
    try {
      await store.migrate();
      expected = await schemaShape(fromEmpty.schema);
      await ingestsByTodaysRules(store, fromEmpty.schema);
      // Migrating again changes nothing.
      await store.migrate();
      expect(await schemaShape(fromEmpty.schema)).toEqual(expected);
    } finally {
      await store.close();
    }
  });

  it.each(RELEASED.map((file) => file.version))(
    'upgrades a schema migrated by the released files to %i, three instances at once, and ingests',
    async (version) => {
      expect(expected).toBeDefined();
      const target = await freshPostgresSchema(`mig_${version}`);
      const stores = [0, 1, 2].map(() =>
        openPostgresStore({ connectionString: target.connectionString, schema: target.schema }),
      );
      try {
        await migrateAsReleased(target.schema, version);
        await Promise.all(stores.map((store) => store.migrate()));
        expect(await schemaShape(target.schema)).toEqual(expected);
        await ingestsByTodaysRules(stores[0]!, target.schema);
      } finally {
        await Promise.all(stores.map((store) => store.close()));
        await target.drop();
      }
    },
  );

  it('fills in the symbol of signals stored without one during the rolling upgrade to 007', async () => {
    await withMigratedStore('mig_symbol', async (store, target) => {
      const seeded = await seed(store, { agents: 1 });
      const stored = request(seeded);
      await store.ingest.commit(stored);
      // As the previous release's instances left their rows, before this fix was migrated.
      await withClient(target.schema, async (client) => {
        await client.query('UPDATE signals SET symbol = NULL WHERE id = $1', [stored.id]);
        await client.query("DELETE FROM schema_migrations WHERE name = 'symbol_backfill'");
      });
      const bySymbol = async () =>
        (await store.signals.list({ symbol: 'EURUSD', limit: 100 })).signals.map((signal) => signal.id);
      expect(await bySymbol()).not.toContain(stored.id);
      await store.migrate();
      expect(await bySymbol()).toContain(stored.id);
    });
  });

  it("gives the deliveries stored before 016 their signal's source and symbol, so the outcome filter with either finds them", async () => {
    await withMigratedStore('mig_deliveries', async (store, target) => {
      const seeded = await seed(store, { agents: 1 });
      const stored = request(seeded);
      await store.ingest.commit(stored);
      const pages = async () => [
        (await store.signals.list({ outcome: 'queued', sourceId: seeded.source.id, limit: 100 })).signals.map(
          (signal) => signal.id,
        ),
        (await store.signals.list({ outcome: 'queued', symbol: 'EURUSD', limit: 100 })).signals.map(
          (signal) => signal.id,
        ),
      ];
      expect(await pages()).toEqual([[stored.id], [stored.id]]);
      // The deliveries as 015 left them: neither column (nor the indexes on them).
      await withClient(target.schema, async (client) => {
        await client.query(`ALTER TABLE deliveries DROP COLUMN source_id, DROP COLUMN symbol;
                            DELETE FROM schema_migrations WHERE name = 'deliveries_source_symbol';`);
      });
      await store.migrate();
      expect(await pages()).toEqual([[stored.id], [stored.id]]);
      // Its keys and indexes are those a fresh schema has.
      await withMigratedStore('mig_deliveries_fresh', async (_, fresh) => {
        expect(await deliveriesShape(target.schema)).toEqual(await deliveriesShape(fresh.schema));
      });
      // And the ingest writes both columns from then on.
      const later = request(seeded);
      await store.ingest.commit(later);
      expect((await pages()).map((ids) => ids.includes(later.id))).toEqual([true, true]);
    });
  });

  it("moves the agents' snapshots out of their rows when 025 runs, and still reads one an instance of an earlier release writes there", async () => {
    await withMigratedStore('mig_agent_states', async (store, target) => {
      const seeded = await seed(store, { agents: 3 });
      const [first, second, third] = seeded.agents.map((agent) => agent.id);
      const before = { balance: 1, positions: [{ symbol: 'EURUSD', volume: 0.1 }] };
      // The schema as 024 left it, each snapshot in its agent's row.
      await withClient(target.schema, async (client) => {
        await client.query(`DROP TABLE agent_states; DELETE FROM schema_migrations WHERE name = 'agent_states';`);
        await client.query('UPDATE agents SET state = $1 WHERE id = ANY ($2)', [
          JSON.stringify(before),
          [first, second],
        ]);
      });
      await store.migrate();
      expect(await store.agents.get(first!)).toMatchObject({ state: before });
      expect((await store.agents.list({ limit: 10 })).items.find((a) => a.id === second)?.stateJson).toBe(
        JSON.stringify(before),
      );
      const rowsWithState = () =>
        withClient(target.schema, async (client) =>
          (await client.query<{ id: string }>('SELECT id FROM agents WHERE state IS NOT NULL ORDER BY id')).rows.map(
            (row) => row.id,
          ),
        );
      expect(await rowsWithState()).toEqual([]);
      // An instance of the earlier release, during the rolling upgrade, writes into the row.
      await withClient(target.schema, (client) =>
        client.query('UPDATE agents SET state = $1 WHERE id = $2', [JSON.stringify({ balance: 3 }), third]),
      );
      expect(await store.agents.get(third!)).toMatchObject({ state: { balance: 3 } });
      // Once this release records the agent's snapshot, that one is read.
      await store.agents.saveState(third!, { balance: 4 }, '2026-01-01T00:00:00.000Z');
      expect(await store.agents.get(third!)).toMatchObject({ state: { balance: 4 } });
    });
  });

  it('fills the per-day counter from the log when 014 runs on a schema that has none', async () => {
    await withMigratedStore('mig_days', async (store, target) => {
      const seeded = await seed(store, { agents: 0 });
      const guard = { bodyDigest: 'digest', since: '2000-01-01T00:00:00.000Z' };
      const reject = {
        kind: 'reject' as const,
        httpStatus: 422,
        problems: [{ code: 'MISSING_ACTION' as const, detail: 'x' }],
      };
      await store.ingest.commit(request(seeded, { duplicateCheck: guard }));
      expect((await store.ingest.commit(request(seeded, { duplicateCheck: guard }))).kind).toBe('duplicate');
      await store.ingest.commit(request(seeded, { verdict: reject }));
      const day = request(seeded).receivedAt.slice(0, 10);
      const counted = await store.signals.countPerDay(seeded.accountId, day, day);
      expect(counted).toEqual([{ day, accepted: 1, rejected: 1 }]);
      // The schema as 013 left it: no counter.
      await withClient(target.schema, async (client) => {
        await client.query(`DROP TABLE signals_per_day; DROP TRIGGER signals_per_day_on_delete ON signals; DROP FUNCTION signalgate_signals_deleted();
                            CREATE INDEX signals_account_duplicate_days ON signals (account_id, received_at) WHERE duplicate_of IS NOT NULL;
                            DELETE FROM schema_migrations WHERE name = 'signals_per_day';`);
      });
      await store.migrate();
      expect(await store.signals.countPerDay(seeded.accountId, day, day)).toEqual(counted);
    });
  });

  it('leaves functions of a higher revision, as a newer release defined them, in place', async () => {
    await withMigratedStore('mig_newer', async (store, target) => {
      const ingestAnswers = () =>
        withClient(target.schema, async (client) => {
          const { rows } = await client.query<{ r: unknown }>("SELECT signalgate_ingest('[]', 's', 'i', false) AS r");
          return rows[0]!.r;
        });
      await withClient(target.schema, async (client) => {
        await client.query(`CREATE OR REPLACE FUNCTION signalgate_ingest(items json, notify_scope text, notify_instance text, isolate boolean)
          RETURNS json LANGUAGE sql AS $$ SELECT '"newer"'::json $$`);
        await client.query(
          `COMMENT ON FUNCTION signalgate_ingest(json, text, text, boolean) IS 'signalgate functions revision 99'`,
        );
      });
      await store.migrate();
      expect(await ingestAnswers()).toBe('newer');
      // Without a revision (as the released numbered migrations left it), it is replaced.
      await withClient(target.schema, (client) =>
        client.query('COMMENT ON FUNCTION signalgate_ingest(json, text, text, boolean) IS NULL'),
      );
      await store.migrate();
      expect(await ingestAnswers()).toEqual([]);
    });
  });
});
