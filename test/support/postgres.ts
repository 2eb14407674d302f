import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/postgres-store.js';

/**
 * The PostgreSQL tests run against; each test file gets its own schema in it. Always set in a
 * test run: the user's server, or the private cluster the run started (private-postgres.ts).
 */
export const TEST_DATABASE_URL = testDatabaseUrl();

function testDatabaseUrl(): string {
  const url = process.env.SIGNALGATE_TEST_DATABASE_URL;
  if (url === undefined || url === '') {
    throw new Error(
      'SIGNALGATE_TEST_DATABASE_URL is unset: run the tests through vitest (npm test or npx vitest run), whose global setup starts a private PostgreSQL',
    );
  }
  return url;
}

export interface TestSchema {
  connectionString: string;
  /** A fresh, unique schema name, created empty. */
  schema: string;
  /**
   * The database URL with the schema as the connection's search_path: what a server process
   * is given as SIGNALGATE_DATABASE_URL to work in this schema.
   */
  urlWithSchema: string;
  /** Drops the schema and everything in it. */
  drop(): Promise<void>;
}

/**
 * A unique schema for one test file, e.g.
 *   const pgSchema = await freshPostgresSchema('http');
 *   const store = await openStore({ dataDir, databaseUrl: pgSchema.connectionString, schema: pgSchema.schema });
 *   afterAll(() => pgSchema.drop());
 */
export async function freshPostgresSchema(label = 't'): Promise<TestSchema> {
  const safeLabel = label
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, 20);
  const schema = `sg_${safeLabel}_${process.pid}_${randomBytes(4).toString('hex')}`;
  const creator = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await creator.connect();
  try {
    await creator.query(`CREATE SCHEMA "${schema}"`);
  } finally {
    await creator.end();
  }
  const url = new URL(TEST_DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    connectionString: TEST_DATABASE_URL,
    schema,
    urlWithSchema: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

/** A store on a fresh schema, migrated, for `work`; the store is closed and the schema dropped after. */
export async function withMigratedStore(
  label: string,
  work: (store: PostgresStore, target: TestSchema) => Promise<void>,
): Promise<void> {
  const target = await freshPostgresSchema(label);
  const store = openPostgresStore({ connectionString: target.connectionString, schema: target.schema });
  try {
    await store.migrate();
    await work(store, target);
  } finally {
    await store.close();
    await target.drop();
  }
}

/**
 * Waits until a session waits for a lock on `table` (schema-qualified, e.g. `"sg_x".signals`),
 * then terminates that session, as a lost connection or a server restart would. Found by the
 * lock on this one table, so a test never hits another test file's session.
 */
export async function terminateSessionWaitingFor(table: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    for (let tries = 0; tries < 200; tries++) {
      const { rows } = await client.query<{ pid: number }>(
        'SELECT pid FROM pg_locks WHERE relation = $1::regclass AND NOT granted',
        [table],
      );
      if (rows[0] !== undefined) {
        await client.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`no session waited for a lock on ${table}`);
  } finally {
    await client.end();
  }
}
