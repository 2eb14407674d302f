import { createHash, randomBytes } from 'node:crypto';
import type { DashboardSession } from '../store/records.js';
import type { Store } from '../store/store.js';

/** How long a dashboard sign-in lasts; the operator signs in again after it. */
export const SESSION_LIFETIME_MS = 12 * 60 * 60 * 1000;

/** The cookie that carries the session id; the id itself is kept only as its digest. */
export const SESSION_COOKIE = 'signalgate_session';

/** The store operations sessions need. */
export type DashboardSessionRecords = Pick<Store, 'dashboardSessions'>;

/**
 * Dashboard sign-ins, kept in the store so that they survive a restart and every instance on
 * one database honours them. The cookie holds 256 random bits; the store holds their digest.
 */
export class DashboardSessions {
  constructor(
    private readonly records: DashboardSessionRecords,
    /** SHA-256 hex of the admin token now in force. */
    private readonly adminTokenDigest: string,
  ) {}

  /** Starts a session for an operator who presented the admin token; answers the cookie value. */
  async start(nowMillis: number): Promise<{ id: string; expiresAt: Date }> {
    const id = randomBytes(32).toString('base64url');
    const expiresAt = new Date(nowMillis + SESSION_LIFETIME_MS);
    await this.records.dashboardSessions.create({
      idDigest: digestOf(id),
      adminTokenDigest: this.adminTokenDigest,
      createdAt: new Date(nowMillis).toISOString(),
      expiresAt: expiresAt.toISOString(),
    });
    return { id, expiresAt };
  }

  /** The session the cookie value names, when it is still in force. */
  async find(id: string | undefined, nowMillis: number): Promise<DashboardSession | null> {
    if (id === undefined || id === '' || id.length > 100) return null;
    const session = await this.records.dashboardSessions.get(digestOf(id));
    if (session === null) return null;
    if (Date.parse(session.expiresAt) <= nowMillis) return null;
    // Signed in with an admin token that is no longer the one: the operator changed it.
    if (session.adminTokenDigest !== this.adminTokenDigest) return null;
    return session;
  }

  async end(id: string | undefined): Promise<void> {
    if (id === undefined || id === '' || id.length > 100) return;
    await this.records.dashboardSessions.delete(digestOf(id));
  }
}

function digestOf(id: string): string {
  return createHash('sha256').update(id, 'utf8').digest('hex');
}
