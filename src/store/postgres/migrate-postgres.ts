import type pg from 'pg';
import { functionsRevisionOf, readFunctionsFile, readMigrationFiles, type FunctionsFile } from '../migration-files.js';

/**
 * Applies the PostgreSQL migrations not yet recorded in `schema_migrations`, creating
 * `schema` first when one is given, then the server-side functions (`functions.sql`, every
 * time). Everything runs under a session advisory lock keyed by the schema, so instances
 * starting together wait for one another instead of racing on CREATE statements (even
 * `CREATE SCHEMA IF NOT EXISTS` can fail when two run at once).
 */
export async function migratePostgres(pool: pg.Pool, schema: string | null): Promise<void> {
  const files = readMigrationFiles('postgres');
  const functions = readFunctionsFile('postgres');
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    const scope = schema ?? (await client.query<{ s: string | null }>('SELECT current_schema() AS s')).rows[0]?.s ?? '';
    await client.query("SELECT pg_advisory_lock(hashtext('signalgate.migrate'), hashtext($1))", [scope]);
    try {
      if (schema !== null) await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS schema_migrations (
           version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const applied = new Set(
        (await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map(
          (row) => row.version,
        ),
      );
      for (const file of files) {
        if (applied.has(file.version)) continue;
        await client.query('BEGIN');
        try {
          await client.query(file.sql);
          await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
            file.version,
            file.name,
          ]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK');
          throw error;
        }
      }
      await applyFunctions(client, functions);
    } finally {
      await client.query("SELECT pg_advisory_unlock(hashtext('signalgate.migrate'), hashtext($1))", [scope]);
    }
  } catch (error) {
    broken = error instanceof Error ? error : new Error(String(error));
    throw error;
  } finally {
    // A connection that failed mid-way may still hold the lock or a transaction: drop it.
    client.release(broken);
  }
}

/**
 * Defines the functions as `functions.sql` has them, replacing whatever an earlier release's
 * numbered migrations left, unless the database holds a higher revision of them: then an
 * instance of a newer release migrated it, and this older one (restarted mid rolling upgrade)
 * leaves the newer definitions in place; the calls it makes are ones they still take.
 */
async function applyFunctions(client: pg.PoolClient, functions: FunctionsFile): Promise<void> {
  await client.query('BEGIN');
  try {
    const { rows } = await client.query<{ comment: string | null }>(
      "SELECT obj_description(to_regprocedure('signalgate_ingest(json, text, text, boolean)'), 'pg_proc') AS comment",
    );
    if (functionsRevisionOf(rows[0]?.comment ?? null) <= functions.revision) await client.query(functions.sql);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}

/** A schema name as an SQL identifier. Names are restricted on the way in; quoting is belt and braces. */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
