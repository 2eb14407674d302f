import type { DashboardSessions } from '../dashboard-sessions.js';
import type { DashboardSession } from '../records.js';
import { isoTime } from '../iso-time.js';
import type { SqliteConnection } from './connection.js';

interface SessionRow {
  id_digest: string;
  admin_token_digest: string;
  created_at: string;
  expires_at: string;
}

/** Dashboard sign-ins: the `dashboard_sessions` table. */
export class SqliteDashboardSessions implements DashboardSessions {
  constructor(private readonly connection: SqliteConnection) {}

  async create(session: DashboardSession): Promise<void> {
    this.connection.db
      .transaction(() => {
        this.connection.stmt('DELETE FROM dashboard_sessions WHERE expires_at <= ?').run(isoTime(session.createdAt));
        this.connection
          .stmt(
            'INSERT INTO dashboard_sessions (id_digest, admin_token_digest, created_at, expires_at) VALUES (?, ?, ?, ?)',
          )
          .run(session.idDigest, session.adminTokenDigest, isoTime(session.createdAt), isoTime(session.expiresAt));
      })
      .immediate();
  }

  async get(idDigest: string): Promise<DashboardSession | null> {
    const row = this.connection.stmt('SELECT * FROM dashboard_sessions WHERE id_digest = ?').get(idDigest) as
      SessionRow | undefined;
    return row
      ? {
          idDigest: row.id_digest,
          adminTokenDigest: row.admin_token_digest,
          createdAt: row.created_at,
          expiresAt: row.expires_at,
        }
      : null;
  }

  async delete(idDigest: string): Promise<boolean> {
    return this.connection.stmt('DELETE FROM dashboard_sessions WHERE id_digest = ?').run(idDigest).changes > 0;
  }
}
