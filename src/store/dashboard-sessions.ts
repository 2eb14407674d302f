import type { DashboardSession } from './records.js';

/** Dashboard sign-ins. */
export interface DashboardSessions {
  /** Records the session, and removes the sessions that expired at or before its createdAt. */
  create(session: DashboardSession): Promise<void>;
  get(idDigest: string): Promise<DashboardSession | null>;
  /** Ends the session; true when there was one. */
  delete(idDigest: string): Promise<boolean>;
}
