import type pg from 'pg';
import type { DashboardSessions } from '../dashboard-sessions.js';
import type { DashboardSession } from '../records.js';
import { isoTime } from '../iso-time.js';
import { inTransaction } from './transaction.js';

interface SessionRow {
  id_digest: string;
  admin_token_digest: string;
  created_at: Date;
  expires_at: Date;
}

/** Dashboard sign-ins: the `dashboard_sessions` table, shared by every instance. */
export class PostgresDashboardSessions implements DashboardSessions {
  constructor(private readonly pool: pg.Pool) {}

  async create(session: DashboardSession): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      await client.query('DELETE FROM dashboard_sessions WHERE expires_at <= $1', [isoTime(session.createdAt)]);
      await client.query(
        'INSERT INTO dashboard_sessions (id_digest, admin_token_digest, created_at, expires_at) VALUES ($1, $2, $3, $4)',
        [session.idDigest, session.adminTokenDigest, isoTime(session.createdAt), isoTime(session.expiresAt)],
      );
    });
  }

  async get(idDigest: string): Promise<DashboardSession | null> {
    const { rows } = await this.pool.query<SessionRow>('SELECT * FROM dashboard_sessions WHERE id_digest = $1', [
      idDigest,
    ]);
    const row = rows[0];
    return row
      ? {
          idDigest: row.id_digest,
          adminTokenDigest: row.admin_token_digest,
          createdAt: row.created_at.toISOString(),
          expiresAt: row.expires_at.toISOString(),
        }
      : null;
  }

  async delete(idDigest: string): Promise<boolean> {
    const { rowCount } = await this.pool.query('DELETE FROM dashboard_sessions WHERE id_digest = $1', [idDigest]);
    return (rowCount ?? 0) > 0;
  }
}
