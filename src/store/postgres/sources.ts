import type pg from 'pg';
import type { Source } from '../records.js';
import type { SourceFilter, SourcePatch, Sources } from '../sources.js';
import { recordPage, type RecordPage } from '../record-page.js';
import { newestFirst } from './newest-first.js';
import { authKeyHash } from '../auth-key-hash.js';
import { isoTime } from '../iso-time.js';
import { patchedSource } from '../patched-source.js';
import type { ItemResult } from '../item-result.js';
import { Batches } from './batches.js';
import { sourceOf, type SourceRow } from './postgres-rows.js';
import { inTransaction } from './transaction.js';
import { INBOUND_ANSWER_TIMEOUT_MS } from './unanswering-server.js';

/** Signal sources, their keys and routing: the `sources` table. */
export class PostgresSources implements Sources {
  private readonly lookups: Batches<string, Source | null>;

  constructor(
    private readonly pool: pg.Pool,
    maxConnections: number,
    private readonly isClosed: () => boolean,
  ) {
    this.lookups = new Batches((hashes) => this.lookUp(hashes), {
      maxBatch: 1000,
      maxInFlight: Math.max(1, Math.floor(maxConnections / 4)),
    });
  }

  /** Resolves when no lookup is in flight (for closing). */
  drained(): Promise<void> {
    return this.lookups.drained();
  }

  async create(source: Source): Promise<void> {
    await this.pool.query(
      `INSERT INTO sources (id, account_id, name, auth_key_hint, auth_key_hash, active, hmac_secret, agent_ids,
                            max_signal_age_seconds, allowed_ips, created_at, revision, duplicate_window_seconds)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
      [
        source.id,
        source.accountId,
        source.name,
        source.authKeyHint,
        source.authKeyHash,
        source.active,
        source.hmacSecret,
        JSON.stringify(source.agentIds),
        source.maxSignalAgeSeconds,
        JSON.stringify(source.allowedIps),
        isoTime(source.createdAt),
        source.revision,
        source.duplicateWindowSeconds,
      ],
    );
  }

  async get(id: string): Promise<Source | null> {
    const { rows } = await this.pool.query<SourceRow>('SELECT * FROM sources WHERE id = $1', [id]);
    return rows[0] ? sourceOf(rows[0]) : null;
  }

  /**
   * Every call reads the database (nothing is cached, so a rotated key stops working at once on
   * every instance); the calls of one event-loop turn share one query.
   */
  async findByAuthKey(authKey: string): Promise<Source | null> {
    if (this.isClosed()) throw new Error('store is closed');
    return this.lookups.submit(authKeyHash(authKey));
  }

  private async lookUp(hashes: string[]): Promise<ItemResult<Source | null>[]> {
    const { rows } = await this.pool.query<SourceRow>({
      name: 'signalgate-find-sources',
      text: 'SELECT * FROM sources WHERE auth_key_hash = ANY ($1::text[])',
      values: [[...new Set(hashes)]],
      // On the inbound path: a silent server is answered 503 in time for the sender.
      query_timeout: INBOUND_ANSWER_TIMEOUT_MS,
    } as pg.QueryConfig);
    const found = new Map(rows.map((row) => [row.auth_key_hash, row]));
    return hashes.map((hash) => {
      const row = found.get(hash);
      return { ok: true, value: row ? sourceOf(row) : null };
    });
  }

  async update(id: string, patch: SourcePatch, now: string): Promise<Source | null> {
    return inTransaction(this.pool, async (client) => {
      // FOR UPDATE conflicts with the key-share lock an ingest takes on its source before it
      // compares revisions (`signalgate_ingest_items`, migrations/postgres/functions.sql): the
      // change waits for the ingests that passed that comparison, and later ones wait for the
      // change, then see the new revision.
      const { rows } = await client.query<SourceRow>('SELECT * FROM sources WHERE id = $1 FOR UPDATE', [id]);
      if (!rows[0]) return null;
      const next = patchedSource(sourceOf(rows[0]), patch);
      await client.query(
        `UPDATE sources SET name = $1, auth_key_hint = $2, auth_key_hash = $3, active = $4, hmac_secret = $5,
                            agent_ids = $6, max_signal_age_seconds = $7, allowed_ips = $8, revision = $9,
                            duplicate_window_seconds = $11
          WHERE id = $10`,
        [
          next.name,
          next.authKeyHint,
          next.authKeyHash,
          next.active,
          next.hmacSecret,
          JSON.stringify(next.agentIds),
          next.maxSignalAgeSeconds,
          JSON.stringify(next.allowedIps),
          next.revision,
          id,
          next.duplicateWindowSeconds,
        ],
      );
      if (next.maxSignalAgeSeconds !== rows[0].max_signal_age_seconds) {
        await client.query(
          `UPDATE deliveries d SET expires_at = s.received_at + make_interval(secs => $2)
             FROM signals s
            WHERE s.id = d.signal_id AND s.source_id = $1 AND d.status IN ('queued', 'delivered') AND d.expires_at > $3`,
          [id, next.maxSignalAgeSeconds, now],
        );
      }
      return next;
    });
  }

  async list(filter: SourceFilter): Promise<RecordPage<Source>> {
    return recordPage(filter, (await newestFirst<SourceRow>(this.pool, 'sources', filter)).map(sourceOf));
  }

  /**
   * Removes the source with its idempotency keys, its signal log and the deliveries of its
   * signals, in one commit: its key finds nothing from then on, and nothing it queued is handed
   * out. The source's row is locked first, so a request being committed on it finishes before.
   */
  async delete(id: string): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query('SELECT id FROM sources WHERE id = $1 FOR UPDATE', [id]);
      if (rows.length === 0) return false;
      await client.query('DELETE FROM idempotency_keys WHERE source_id = $1', [id]);
      await client.query('DELETE FROM deliveries WHERE signal_id IN (SELECT id FROM signals WHERE source_id = $1)', [
        id,
      ]);
      await client.query('DELETE FROM signals WHERE source_id = $1', [id]);
      // Its risk rules go with it; a halt of it stays in the halts' history, released.
      await client.query(`DELETE FROM risk_rules WHERE scope = 'source' AND id = $1`, [id]);
      await client.query(
        `UPDATE risk_halts SET released_at = now(), released_by = 'source deleted'
          WHERE scope = 'source' AND target_id = $1 AND released_at IS NULL`,
        [id],
      );
      await client.query('DELETE FROM sources WHERE id = $1', [id]);
      return true;
    });
  }
}
