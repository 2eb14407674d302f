import pg from 'pg';
import { ANSWER_TIMEOUT_MS } from './unanswering-server.js';

/** How long the check waits for a connection: as long as a store's start would. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Whether the database (in `schema`, else the connection's search_path) holds a signalgate
 * store: its `schema_migrations` table records the first migration. Read-only, so a command
 * pointed at the wrong database can refuse before anything is created there. The table name is
 * common to other tools, hence the look at the first migration's name as well.
 */
export async function postgresStorePresent(connectionString: string, schema: string | null): Promise<boolean> {
  const client = new pg.Client({
    connectionString,
    ...(schema !== null && { options: `-c search_path=${schema}` }),
    application_name: 'signalgate',
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    query_timeout: ANSWER_TIMEOUT_MS,
  });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query<{ present: boolean }>(
      "SELECT to_regclass('schema_migrations') IS NOT NULL AS present",
    );
    if (rows[0]?.present !== true) return false;
    const first = await client.query("SELECT 1 FROM schema_migrations WHERE version = 1 AND name = 'initial'");
    return first.rowCount === 1;
  } finally {
    await client.end().catch(() => undefined);
  }
}
