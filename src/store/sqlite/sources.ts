import type { Source } from '../records.js';
import type { SourceFilter, SourcePatch, Sources } from '../sources.js';
import { recordPage, type RecordPage } from '../record-page.js';
import { authKeyHash } from '../auth-key-hash.js';
import { isoTime } from '../iso-time.js';
import { patchedSource } from '../patched-source.js';
import type { SqliteConnection } from './connection.js';
import { GenerationCache } from './generation-cache.js';
import { newestFirst } from './newest-first.js';
import { sourceOf, type SourceRow } from './sqlite-rows.js';

/** Signal sources, their keys and routing: the `sources` table. */
export class SqliteSources implements Sources {
  /** The sources found by key, valid while `source_generation` stays where it was. */
  private readonly cache: GenerationCache<Source>;
  private cacheVersion = -1;
  private cacheChecked = false;

  constructor(private readonly connection: SqliteConnection) {
    this.cache = new GenerationCache(
      () => connection.stmt('SELECT generation FROM source_generation WHERE id = 1').pluck().get() as number,
    );
  }

  /** Drops the cached sources: one of them is known to have changed. */
  forgetCached(): void {
    this.cache.clear();
  }

  async create(source: Source): Promise<void> {
    this.cache.clear();
    this.connection
      .stmt(
        `INSERT INTO sources (id, account_id, name, auth_key_hint, auth_key_hash, active, hmac_secret, agent_ids,
                              max_signal_age_seconds, allowed_ips, created_at, revision, duplicate_window_seconds)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        source.id,
        source.accountId,
        source.name,
        source.authKeyHint,
        source.authKeyHash,
        source.active ? 1 : 0,
        source.hmacSecret,
        JSON.stringify(source.agentIds),
        source.maxSignalAgeSeconds,
        JSON.stringify(source.allowedIps),
        isoTime(source.createdAt),
        source.revision,
        source.duplicateWindowSeconds,
      );
  }

  async get(id: string): Promise<Source | null> {
    const row = this.connection.stmt('SELECT * FROM sources WHERE id = ?').get(id) as SourceRow | undefined;
    return row ? sourceOf(row) : null;
  }

  /**
   * Every inbound request starts here, so found sources are cached. The cache is dropped on this
   * connection's own source writes and whenever another connection (the event loop's, the CLI)
   * changed a source, so a rotated key or deactivated source stops working at once. Another
   * connection's commit moves `data_version`; only then is the sources' generation (moved by
   * triggers on every change to `sources`) read, since most such commits are agents' acks and
   * hand-outs, which leave the sources as they were.
   */
  async findByAuthKey(authKey: string): Promise<Source | null> {
    if (!this.cacheChecked) {
      // Asking costs a read transaction on the WAL: once per event-loop turn is enough.
      this.cacheChecked = true;
      setImmediate(() => (this.cacheChecked = false));
      const version = this.connection.stmt('PRAGMA data_version').pluck().get() as number;
      if (version !== this.cacheVersion) {
        this.cacheVersion = version;
        this.cache.refresh();
      }
    }
    return this.cache.get(authKey, () => {
      const row = this.connection.stmt('SELECT * FROM sources WHERE auth_key_hash = ?').get(authKeyHash(authKey)) as
        SourceRow | undefined;
      return row ? Object.freeze(sourceOf(row)) : null;
    });
  }

  async update(id: string, patch: SourcePatch, now: string): Promise<Source | null> {
    this.cache.clear();
    return this.connection.db
      .transaction((): Source | null => {
        const row = this.connection.stmt('SELECT * FROM sources WHERE id = ?').get(id) as SourceRow | undefined;
        if (!row) return null;
        const next = patchedSource(sourceOf(row), patch);
        this.connection
          .stmt(
            `UPDATE sources SET name = ?, auth_key_hint = ?, auth_key_hash = ?, active = ?, hmac_secret = ?, agent_ids = ?,
                                max_signal_age_seconds = ?, allowed_ips = ?, revision = ?, duplicate_window_seconds = ?
              WHERE id = ?`,
          )
          .run(
            next.name,
            next.authKeyHint,
            next.authKeyHash,
            next.active ? 1 : 0,
            next.hmacSecret,
            JSON.stringify(next.agentIds),
            next.maxSignalAgeSeconds,
            JSON.stringify(next.allowedIps),
            next.revision,
            next.duplicateWindowSeconds,
            id,
          );
        if (next.maxSignalAgeSeconds !== row.max_signal_age_seconds) {
          // The new age applies to what is not final and not yet due (an overdue delivery the
          // sweep has not reached stays overdue). Driven by the pending deliveries (a partial
          // index), not by the source's whole log. Times are kept as 'YYYY-MM-DDTHH:MM:SS.sssZ';
          // %f is seconds with milliseconds.
          this.connection
            .stmt(
              `UPDATE deliveries
                  SET expires_at = (SELECT strftime('%Y-%m-%dT%H:%M:%fZ', s.received_at, '+' || ? || ' seconds')
                                      FROM signals s WHERE s.id = deliveries.signal_id)
                WHERE status IN ('queued', 'delivered') AND expires_at > ?
                  AND (SELECT s.source_id FROM signals s WHERE s.id = deliveries.signal_id) = ?`,
            )
            .run(next.maxSignalAgeSeconds, now, id);
        }
        return next;
      })
      .immediate();
  }

  async list(filter: SourceFilter): Promise<RecordPage<Source>> {
    return recordPage(filter, newestFirst<SourceRow>(this.connection, 'sources', filter).map(sourceOf));
  }

  /**
   * Removes the source with its idempotency keys, its signal log and the deliveries of its
   * signals, in one commit: its key finds nothing from then on, and nothing it queued is handed out.
   */
  async delete(id: string): Promise<boolean> {
    this.cache.clear();
    return this.connection.db
      .transaction((): boolean => {
        if (this.connection.stmt('SELECT 1 FROM sources WHERE id = ?').get(id) === undefined) return false;
        this.connection.stmt('DELETE FROM idempotency_keys WHERE source_id = ?').run(id);
        this.connection
          .stmt('DELETE FROM deliveries WHERE signal_id IN (SELECT id FROM signals WHERE source_id = ?)')
          .run(id);
        this.connection.stmt('DELETE FROM signals WHERE source_id = ?').run(id);
        // Its risk rules go with it; a halt of it stays in the halts' history, released.
        this.connection.stmt("DELETE FROM risk_rules WHERE scope = 'source' AND id = ?").run(id);
        this.connection
          .stmt(
            `UPDATE risk_halts SET released_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), released_by = 'source deleted'
              WHERE scope = 'source' AND target_id = ? AND released_at IS NULL`,
          )
          .run(id);
        this.connection.stmt('DELETE FROM sources WHERE id = ?').run(id);
        return true;
      })
      .immediate();
  }
}
