import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import { ErrorCode } from '../src/errors/catalog.js';
import {
  accountCount,
  AGENT_STATE,
  accountId,
  agentId,
  agentsOf,
  seedDeliveryStatus,
  seedSignal,
  signalId,
  sourceId,
  sourcesPerAccount,
  SPAN_MS,
} from './big-log-shape.js';

const CHUNK = 200_000;
const iso = (millis: number) => new Date(millis).toISOString();
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Writes the big log (big-log-shape.ts) into a SQLite store the server has already migrated:
 * straight inserts in the store's own schema, prepared statements in transactions of 200,000
 * signals, in log order. The log's secondary indexes (on signals and deliveries) are dropped
 * first and created again from their own stored SQL once the rows are in: one sort each instead
 * of millions of inserts at random places in a dozen b-trees, and the same schema as the
 * migrations made. Durability is off while seeding only (no journal, no syncs); the store goes
 * back to WAL, which the server also sets as it opens it.
 */
export function seedSqlite(file: string, n: number, endMillis: number, progress: (done: number) => void): void {
  const db = new Database(file);
  try {
    // better-sqlite3 runs SQLite in defensive mode, which refuses to turn the journal off.
    db.unsafeMode(true);
    const journal = db.pragma('journal_mode = OFF', { simple: true });
    if (journal !== 'off')
      throw new Error(`seeding ${file}: SQLite kept journal_mode ${String(journal)} where OFF was asked`);
    db.pragma('synchronous = OFF');
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('cache_size = -1000000');
    db.pragma('threads = 2'); // the index builds' sorts
    const indexes = db
      .prepare<[], { name: string; sql: string }>(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ('signals', 'deliveries') ORDER BY rowid",
      )
      .all();
    for (const index of indexes) db.exec(`DROP INDEX "${index.name}"`);
    const created = iso(endMillis - SPAN_MS - 86_400_000);
    const accounts = accountCount(n);
    db.transaction(() => {
      const account = db.prepare(
        'INSERT INTO accounts (id, name, monthly_signal_quota, created_at) VALUES (?, ?, ?, ?)',
      );
      const source = db.prepare(
        `INSERT INTO sources (id, account_id, name, auth_key_hint, auth_key_hash, active, max_signal_age_seconds, created_at)
         VALUES (?, ?, ?, ?, ?, 1, 120, ?)`,
      );
      const agent = db.prepare(
        'INSERT INTO agents (id, account_id, name, token_hash, created_at, last_seq, state) VALUES (?, ?, ?, ?, ?, ?, ?)',
      );
      for (let a = 0; a < accounts; a++) {
        account.run(accountId(a), `tenant ${a}`, 100_000_000, created);
        for (let s = 0; s < sourcesPerAccount; s++) {
          const key = `bl_key_${a}_${s}`;
          source.run(sourceId(a, s), accountId(a), `source ${s}`, key.slice(0, 4), sha(key), created);
        }
        for (let k = 0; k < agentsOf(a); k++)
          agent.run(agentId(a, k), accountId(a), `agent ${k}`, sha(`bl_token_${a}_${k}`), created, n, AGENT_STATE);
      }
    })();
    const signal = db.prepare(
      `INSERT INTO signals (id, source_id, account_id, received_at, status, http_status, code, detail, param, errors,
                            content_type, raw_body, normalized, quota_period, quota_used, quota_limit, duplicate_of)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'text/plain', ?, ?, ?, ?, ?, ?)`,
    );
    const delivery = db.prepare(
      `INSERT INTO deliveries (signal_id, agent_id, seq, status, expires_at, delivered_at, attempts, acked_at, message, received_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const insertChunk = db.transaction((from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const s = seedSignal(i, n, endMillis);
        const at = iso(s.receivedMillis);
        const body = `${s.symbol},${s.action},vol=0.1,sl_pips=20,tp_pips=40`;
        if (s.status === 'rejected') {
          const detail = `unknown action '${s.action}x'; did you mean ${s.action}?`;
          signal.run(
            s.id,
            sourceId(s.account, s.source),
            accountId(s.account),
            at,
            'rejected',
            422,
            ErrorCode.UNKNOWN_ACTION,
            detail,
            'action',
            JSON.stringify([{ code: ErrorCode.UNKNOWN_ACTION, param: 'action', detail }]),
            `${s.symbol},${s.action}x,vol=0.1`,
            null,
            null,
            null,
            null,
            null,
          );
          continue;
        }
        const normalized = `{"symbol":"${s.symbol}","action":"${s.action}","volume":{"type":"lots","value":0.1},"sl":{"type":"pips","value":20},"tp":[{"type":"pips","value":40,"pct":100}]}`;
        signal.run(
          s.id,
          sourceId(s.account, s.source),
          accountId(s.account),
          at,
          'queued',
          202,
          null,
          null,
          null,
          null,
          body,
          normalized,
          at.slice(0, 7),
          1 + (i % 1000),
          100_000_000,
          s.status === 'duplicate' ? signalId(Math.max(0, i - 1)) : null,
        );
        if (s.status !== 'accepted') continue;
        for (let k = 0; k < agentsOf(s.account); k++) {
          const status = seedDeliveryStatus(i, k, n);
          const handed = status !== 'queued';
          const acked = handed && status !== 'delivered' && status !== 'expired';
          delivery.run(
            s.id,
            agentId(s.account, k),
            i + 1,
            status,
            iso(s.receivedMillis + 120_000),
            handed ? iso(s.receivedMillis + 50) : null,
            handed ? 1 : 0,
            acked ? iso(s.receivedMillis + 300) : null,
            status === 'rejected' || status === 'failed' ? 'broker said no' : null,
            at,
          );
        }
      }
    });
    for (let from = 0; from < n; from += CHUNK) {
      insertChunk(from, Math.min(n, from + CHUNK));
      progress(Math.min(n, from + CHUNK));
    }
    db.exec(`INSERT INTO usage (account_id, period, used)
               SELECT account_id, quota_period, count(*) FROM signals WHERE quota_period IS NOT NULL AND duplicate_of IS NULL
                GROUP BY account_id, quota_period`);
    // The chart's counter, as migration 012 fills it for an existing log.
    db.exec(`INSERT INTO signals_per_day (account_id, day, accepted, rejected)
               SELECT account_id, substr(received_at, 1, 10), sum(status = 'queued' AND duplicate_of IS NULL), sum(status = 'rejected')
                 FROM signals WHERE status = 'rejected' OR (status = 'queued' AND duplicate_of IS NULL)
                GROUP BY account_id, substr(received_at, 1, 10)`);
    for (const index of indexes) db.exec(index.sql);
    db.pragma('journal_mode = WAL');
    db.unsafeMode(false);
  } finally {
    db.close();
  }
}
