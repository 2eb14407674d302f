import { isoTime } from '../iso-time.js';
import type { Leases } from '../leases.js';
import type { SqliteConnection } from './connection.js';

/** Leases on SQLite: one upsert that takes the row only when it is free, run out, or ours. */
export class SqliteLeases implements Leases {
  constructor(private readonly connection: SqliteConnection) {}

  async hold(name: string, holder: string, now: string, ttlMs: number): Promise<boolean> {
    const at = isoTime(now);
    const until = new Date(Date.parse(at) + ttlMs).toISOString();
    const row = this.connection
      .stmt(
        `INSERT INTO leases (name, holder, until) VALUES (@name, @holder, @until)
         ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until
         WHERE leases.holder = excluded.holder OR leases.until <= @at
         RETURNING holder`,
      )
      .get({ name, holder, until, at }) as { holder: string } | undefined;
    return row?.holder === holder;
  }

  async release(name: string, holder: string): Promise<void> {
    this.connection.stmt('DELETE FROM leases WHERE name = ? AND holder = ?').run(name, holder);
  }
}
