import type { StoreBackend } from '../store-backend.js';
import { openPostgresStore } from './postgres-store.js';

/**
 * The PostgreSQL store. Inbound requests are checked and committed on the event loop, which
 * does not block while the database server commits; other instances hear of the deliveries
 * through the store's notifications.
 */
export function postgresBackend(options: { connectionString: string; schema: string | null }): StoreBackend {
  const store = openPostgresStore(options);
  return { store, inboundLane: { kind: 'event-loop' } };
}
