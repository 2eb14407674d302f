import pg from 'pg';
import { StoreUnavailableError } from '../store-unavailable.js';

/**
 * How long the inbound path's statements (the source lookup, the ingest call) wait for
 * PostgreSQL's answer: with a connection to get first, a sender that gives up after 3 s still
 * gets an answer.
 */
export const INBOUND_ANSWER_TIMEOUT_MS = 2000;
/** How long any other statement waits for an answer before its connection is given up. */
export const ANSWER_TIMEOUT_MS = 10_000;
/** What `pg` says when a statement's answer did not come within its `query_timeout`. */
export const NO_ANSWER_MESSAGE = 'Query read timeout';
/** How often a server that stopped answering is asked again, on a fresh connection. */
const PROBE_INTERVAL_MS = 500;

/**
 * A PostgreSQL server that accepts connections and stops answering (its processes stopped,
 * a storage stall): each statement under way waits for its timeout, but the pool would go on
 * handing out its idle connections to the same silent server, each request waiting in turn.
 * Once one statement went unanswered, this makes the pool refuse at once
 * (`StoreUnavailableError`, nothing sent, so a truthful 503) until a probe on a fresh
 * connection is answered again, a few hundred milliseconds after the server is back.
 */
export class UnansweringServerGuard {
  private silentSince: number | null = null;
  private probing: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly clientConfig: pg.ClientConfig,
  ) {
    pool.on('release', (error: unknown) => {
      if (error instanceof Error && error.message === NO_ANSWER_MESSAGE) this.trip();
    });
    const connect = pool.connect.bind(pool) as (callback?: (...args: unknown[]) => void) => unknown;
    // pg-pool's own query() goes through connect(callback): both forms are guarded.
    (pool as { connect: unknown }).connect = (callback?: (...args: unknown[]) => void) => {
      if (this.silentSince === null) return connect(callback);
      const refused = new StoreUnavailableError(
        `PostgreSQL stopped answering ${Math.round((Date.now() - this.silentSince) / 1000)} s ago (a statement got no answer within its timeout); waiting for it to answer again`,
      );
      if (callback) {
        process.nextTick(() => callback(refused));
        return undefined;
      }
      return Promise.reject(refused);
    };
  }

  /** Stops probing (the store closes). */
  async close(): Promise<void> {
    this.closed = true;
    await this.probing;
  }

  private trip(): void {
    if (this.silentSince !== null || this.closed) return;
    this.silentSince = Date.now();
    this.probing = this.probeUntilAnswered().finally(() => {
      this.probing = null;
    });
  }

  private async probeUntilAnswered(): Promise<void> {
    while (!this.closed) {
      await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS));
      if (await this.answers()) break;
    }
    this.silentSince = null;
  }

  private async answers(): Promise<boolean> {
    const client = new pg.Client({ ...this.clientConfig, connectionTimeoutMillis: 1000, query_timeout: 1000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      // Not awaited: ending a connection to a silent server waits for it.
      void client.end().catch(() => undefined);
    }
  }
}
