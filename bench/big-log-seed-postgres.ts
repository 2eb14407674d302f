import pg from 'pg';
import { ErrorCode } from '../src/errors/catalog.js';
import { accountCount, AGENT_STATE, SPAN_MS, SYMBOLS } from './big-log-shape.js';

const CHUNK = 500_000;

/**
 * Signal i's fields as SQL over `generate_series` (the twin of seedSignal in big-log-shape.ts):
 * i, a (account), src, sym, st ('accepted', 'rejected', 'duplicate'), at (received_at), act.
 */
function generated(n: number, endMillis: number): string {
  const accounts = accountCount(n);
  const symbols = `ARRAY[${SYMBOLS.map((s) => `'${s}'`).join(',')}]`;
  return `SELECT i, a, 'src_bl' || lpad(a::text, 5, '0') || '_' || (i % 3) AS src, 'acc_bl' || lpad(a::text, 5, '0') AS acc,
                 (${symbols})[1 + floor(${SYMBOLS.length} * v * v)::int] AS sym,
                 CASE WHEN r < 50 THEN 'rejected' WHEN r < 70 THEN 'duplicate' ELSE 'accepted' END AS st,
                 timestamptz 'epoch' + (${endMillis - SPAN_MS}::bigint + floor(i * (${SPAN_MS}::float8 / ${n}))::bigint) * interval '1 millisecond' AS at,
                 CASE WHEN i % 2 = 0 THEN 'buy' ELSE 'sell' END AS act,
                 'sig_bl' || lpad(to_hex(i), 11, '0') AS id
            FROM (SELECT i, floor(${accounts} * power(((i * 104729) % 1000003)::float8 / 1000003, 2))::int AS a,
                         ((i * 15485863) % 1000033)::float8 / 1000033 AS v, (i * 7919) % 1000 AS r
                    FROM generate_series($1::bigint, $2::bigint - 1) AS i) x`;
}

/**
 * Writes the big log (big-log-shape.ts) into a PostgreSQL schema the server has already
 * migrated: `INSERT … SELECT` over `generate_series`, 500,000 signals a statement, with the
 * foreign-key triggers off for the session (the rows are consistent by construction). The log's
 * secondary indexes (on signals and deliveries, those behind no constraint) are dropped first and
 * created again from their own definitions once the rows are in: one sort each instead of
 * millions of inserts at random places in a dozen b-trees, and the same schema as the migrations
 * made. Then VACUUM ANALYZE of the schema's tables, as autovacuum would have done on a store
 * that grew to this size.
 */
export async function seedPostgres(
  url: string,
  n: number,
  endMillis: number,
  progress: (done: number) => void,
): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('SET session_replication_role = replica').catch(() => undefined);
    await client.query('SET synchronous_commit = off');
    await client.query("SET maintenance_work_mem = '1GB'");
    const { rows: indexes } = await client.query<{ name: string; definition: string }>(
      `SELECT c.relname AS name, pg_get_indexdef(c.oid) AS definition
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
        WHERE t.relnamespace = current_schema()::regnamespace AND t.relname IN ('signals', 'deliveries')
          AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
        ORDER BY c.oid`,
    );
    for (const index of indexes) await client.query(`DROP INDEX "${index.name}"`);
    const accounts = accountCount(n);
    const created = `timestamptz 'epoch' + ${endMillis - SPAN_MS - 86_400_000}::bigint * interval '1 millisecond'`;
    await client.query(`
      INSERT INTO accounts (id, name, monthly_signal_quota, created_at)
        SELECT 'acc_bl' || lpad(a::text, 5, '0'), 'tenant ' || a, 100000000, ${created} FROM generate_series(0, ${accounts - 1}) a;
      INSERT INTO sources (id, account_id, name, auth_key_hint, auth_key_hash, active, max_signal_age_seconds, created_at)
        SELECT 'src_bl' || lpad(a::text, 5, '0') || '_' || s, 'acc_bl' || lpad(a::text, 5, '0'), 'source ' || s,
               left('bl_key_' || a || '_' || s, 4), encode(sha256(convert_to('bl_key_' || a || '_' || s, 'UTF8')), 'hex'), true, 120, ${created}
          FROM generate_series(0, ${accounts - 1}) a, generate_series(0, 2) s;
      INSERT INTO agents (id, account_id, name, token_hash, created_at, last_seq, state)
        SELECT 'agt_bl' || lpad(a::text, 5, '0') || '_' || k, 'acc_bl' || lpad(a::text, 5, '0'), 'agent ' || k,
               encode(sha256(convert_to('bl_token_' || a || '_' || k, 'UTF8')), 'hex'), ${created}, ${n}, '${AGENT_STATE}'::json
          FROM generate_series(0, ${accounts - 1}) a, generate_series(0, CASE WHEN a % 5 = 0 THEN 1 ELSE 0 END) k;`);
    const g = generated(n, endMillis);
    for (let from = 0; from < n; from += CHUNK) {
      const to = Math.min(n, from + CHUNK);
      await client.query(
        `INSERT INTO signals (id, source_id, account_id, received_at, status, http_status, code, detail, param, errors,
                              content_type, raw_body, normalized, symbol, quota_period, quota_used, quota_limit, duplicate_of)
         SELECT id, src, acc, at, CASE WHEN st = 'rejected' THEN 'rejected' ELSE 'queued' END, CASE WHEN st = 'rejected' THEN 422 ELSE 202 END,
                CASE WHEN st = 'rejected' THEN '${ErrorCode.UNKNOWN_ACTION}' END,
                CASE WHEN st = 'rejected' THEN 'unknown action ''' || act || 'x''; did you mean ' || act || '?' END,
                CASE WHEN st = 'rejected' THEN 'action' END,
                CASE WHEN st = 'rejected' THEN json_build_array(json_build_object('code', '${ErrorCode.UNKNOWN_ACTION}', 'param', 'action',
                  'detail', 'unknown action ''' || act || 'x''; did you mean ' || act || '?')) END,
                'text/plain',
                convert_to(CASE WHEN st = 'rejected' THEN sym || ',' || act || 'x,vol=0.1' ELSE sym || ',' || act || ',vol=0.1,sl_pips=20,tp_pips=40' END, 'UTF8'),
                CASE WHEN st <> 'rejected' THEN ('{"symbol":"' || sym || '","action":"' || act
                  || '","volume":{"type":"lots","value":0.1},"sl":{"type":"pips","value":20},"tp":[{"type":"pips","value":40,"pct":100}]}')::json END,
                CASE WHEN st <> 'rejected' THEN sym END,
                CASE WHEN st <> 'rejected' THEN to_char(at AT TIME ZONE 'UTC', 'YYYY-MM') END,
                CASE WHEN st <> 'rejected' THEN 1 + i % 1000 END,
                CASE WHEN st <> 'rejected' THEN 100000000 END,
                CASE WHEN st = 'duplicate' THEN 'sig_bl' || lpad(to_hex(greatest(0, i - 1)), 11, '0') END
           FROM (${g}) s`,
        [from, to],
      );
      await client.query(
        `INSERT INTO deliveries (signal_id, agent_id, seq, status, expires_at, delivered_at, attempts, acked_at, message, received_at,
                                 source_id, symbol)
         SELECT id, 'agt_bl' || lpad(a::text, 5, '0') || '_' || k, i + 1, ds, at + interval '2 minutes',
                CASE WHEN ds <> 'queued' THEN at + interval '50 milliseconds' END, CASE WHEN ds <> 'queued' THEN 1 ELSE 0 END,
                CASE WHEN ds IN ('executed', 'rejected', 'failed') THEN at + interval '300 milliseconds' END,
                CASE WHEN ds IN ('rejected', 'failed') THEN 'broker said no' END, at, src, sym
           FROM (SELECT s.*, k, CASE WHEN i >= ${n - 50} THEN 'queued' WHEN i >= ${n - 200} THEN 'delivered'
                                     ELSE (ARRAY['executed', 'rejected', 'failed', 'expired'])[
                                       CASE WHEN (i * 6151 + k * 17) % 100 < 80 THEN 1 WHEN (i * 6151 + k * 17) % 100 < 88 THEN 2
                                            WHEN (i * 6151 + k * 17) % 100 < 91 THEN 3 ELSE 4 END] END AS ds
                   FROM (${g}) s, generate_series(0, CASE WHEN a % 5 = 0 THEN 1 ELSE 0 END) k
                  WHERE st = 'accepted') d`,
        [from, to],
      );
      progress(to);
    }
    await client.query(`INSERT INTO usage (account_id, period, used)
                          SELECT account_id, quota_period, count(*) FROM signals WHERE quota_period IS NOT NULL AND duplicate_of IS NULL
                           GROUP BY account_id, quota_period`);
    // The chart's counter, as migration 014 fills it for an existing log.
    await client.query(`INSERT INTO signals_per_day (account_id, day, accepted, rejected)
                          SELECT account_id, (received_at AT TIME ZONE 'UTC')::date,
                                 count(*) FILTER (WHERE status = 'queued' AND duplicate_of IS NULL), count(*) FILTER (WHERE status = 'rejected')
                            FROM signals WHERE status = 'rejected' OR (status = 'queued' AND duplicate_of IS NULL)
                           GROUP BY 1, 2`);
    for (const index of indexes) await client.query(index.definition);
    const { rows: tables } = await client.query<{ name: string }>(
      'SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename',
    );
    await client.query(`VACUUM ANALYZE ${tables.map((t) => `"${t.name}"`).join(', ')}`);
  } finally {
    await client.end();
  }
}
