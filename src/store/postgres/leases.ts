import type pg from 'pg';
import { isoTime } from '../iso-time.js';
import type { Leases } from '../leases.js';

/**
 * Leases shared by every instance of the database: one upsert takes the row only when it is
 * free, run out, or already the asker's; the row lock makes two askers at once take turns, so
 * at most one of them gets it.
 */
export class PostgresLeases implements Leases {
  constructor(private readonly pool: pg.Pool) {}

  async hold(name: string, holder: string, now: string, ttlMs: number): Promise<boolean> {
    const { rows } = await this.pool.query<{ holder: string }>(
      `INSERT INTO leases (name, holder, until) VALUES ($1, $2, $3::timestamptz + $4 * interval '1 millisecond')
       ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until
       WHERE leases.holder = excluded.holder OR leases.until <= $3::timestamptz
       RETURNING holder`,
      [name, holder, isoTime(now), ttlMs],
    );
    return rows[0]?.holder === holder;
  }

  async release(name: string, holder: string): Promise<void> {
    await this.pool.query('DELETE FROM leases WHERE name = $1 AND holder = $2', [name, holder]);
  }
}
