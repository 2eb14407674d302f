import pg from 'pg';
import type { Ingest, IngestOutcome, IngestRequest } from '../ingest.js';
import { OutcomeUnknownError } from '../outcome-unknown.js';
import type { IngestDone } from '../ingest-done.js';
import type { ItemResult } from '../item-result.js';
import { Batches } from './batches.js';
import { ingestDone, ingestItem, type IngestAnswer, type IngestItem } from './ingest-call.js';
import { againIfRolledBack } from './transaction.js';
import { INBOUND_ANSWER_TIMEOUT_MS } from './unanswering-server.js';

/**
 * Items per ingest batch. When a batch is resent isolated, each item is a subtransaction; above
 * 64 in one transaction PostgreSQL marks its snapshot data "overflowed", which slows every other
 * session's visibility checks.
 */
const MAX_BATCH = 50;

/** One fixed order of ids (UTF-16 code units), the same in every instance. */
function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export interface PostgresIngestOptions {
  maxConnections: number;
  /** The schema the tables are in, named in the notifications of new deliveries. */
  scope: () => string;
  /** This instance's id, so it can tell its own notifications from other instances'. */
  instance: string;
  isClosed: () => boolean;
  /** Tells this process's watchers of agents with new, committed deliveries. */
  notify: (agentIds: string[]) => void;
}

/**
 * The ingest (`store.ingest.commit`) on PostgreSQL. Ingests are group-committed: those of one event-loop turn go
 * to the server-side function `signalgate_ingest` (migrations/postgres/functions.sql) in one
 * call, one implicit transaction. The quota is charged by a conditional upsert, idempotency keys
 * are a primary key that concurrent repeats queue on, and per-agent sequence numbers come from
 * the agents' rows locked in id order, so they follow commit order.
 */
export class PostgresIngest implements Ingest {
  private readonly ingests: Batches<IngestRequest, IngestDone>;

  constructor(
    private readonly pool: pg.Pool,
    private readonly options: PostgresIngestOptions,
  ) {
    // One batch per account in flight (the next waits here, growing, rather than at the
    // account's usage-row lock), and half the pool at most, so the other queries (source
    // lookups, polls, acks) still find a connection.
    this.ingests = new Batches((requests) => this.ingestBatch(requests), {
      maxBatch: MAX_BATCH,
      maxInFlight: Math.max(1, Math.floor(options.maxConnections / 2)),
      keyOf: (request) => request.accountId,
    });
  }

  /** Resolves when no batch is in flight (for closing). */
  drained(): Promise<void> {
    return this.ingests.drained();
  }

  async commit(request: IngestRequest): Promise<IngestOutcome> {
    // A deadlock or serialization failure rolled this request back (alone or with its batch):
    // nothing of it happened, so it is sent again.
    return againIfRolledBack(async () => {
      if (this.options.isClosed()) throw new Error('store is closed');
      return (await this.ingests.submit(request)).outcome;
    });
  }

  /**
   * One call of `signalgate_ingest` (one implicit transaction, one round trip) for the batch;
   * only when the database refuses it is the batch sent again with every item isolated.
   * Items go in account order, arrival order within an account, so concurrent batches take
   * the accounts' usage rows in the same order and do not deadlock on them; an agent belongs to
   * one account, so its deliveries keep arrival order. Listeners hear of new deliveries once
   * the call (and so the COMMIT) returned.
   */
  private async ingestBatch(requests: IngestRequest[]): Promise<ItemResult<IngestDone>[]> {
    const results: ItemResult<IngestDone>[] = new Array<ItemResult<IngestDone>>(requests.length);
    const order = requests.map((_, i) => i).sort((x, y) => compareIds(requests[x]!.accountId, requests[y]!.accountId));
    const items: IngestItem[] = [];
    const positions: number[] = [];
    for (const i of order) {
      try {
        items.push(ingestItem(requests[i]!, items.length));
        positions.push(i);
      } catch (error) {
        results[i] = { ok: false, error };
      }
    }
    if (items.length > 0) {
      const batch = JSON.stringify(items);
      let answers: IngestAnswer[];
      try {
        answers = await this.callIngest(batch, false);
      } catch (error) {
        // The server refused the call and rolled all of it back: send the batch again, each
        // item in its own subtransaction, so what failed fails alone.
        if (error instanceof OutcomeUnknownError) throw error;
        answers = await this.callIngest(batch, true);
      }
      const agentIds = new Set<string>();
      for (const answer of answers) {
        const i = positions[answer.n];
        if (i === undefined) continue;
        try {
          const done = ingestDone(requests[i]!, answer);
          for (const id of done.agentIds) agentIds.add(id);
          results[i] = { ok: true, value: done };
        } catch (error) {
          // An item the call answered as failed was rolled back; one it answered as done was
          // committed, so if its answer cannot be read, its outcome is unknown.
          results[i] = { ok: false, error: answer.ok ? new OutcomeUnknownError(error) : error };
        }
      }
      // The call committed: an item it did not answer may have been stored.
      for (const i of positions) {
        results[i] ??= {
          ok: false,
          error: new OutcomeUnknownError(new Error('signalgate_ingest gave no answer for this item')),
        };
      }
      // After COMMIT: this process's listeners hear it now, other instances through NOTIFY.
      if (agentIds.size > 0) this.options.notify([...agentIds].sort());
    }
    return results;
  }

  /**
   * One call of `signalgate_ingest` in its own implicit transaction. It fails plainly only when
   * nothing can have been committed: no connection was had, or the server answered the call
   * with an error (it rolled the call back). Any other failure once the call was sent (the
   * connection lost, the session terminated: SQLSTATE classes 08 and 57) may have come after
   * the COMMIT, so the outcome is unknown (`OutcomeUnknownError`).
   */
  private async callIngest(batch: string, isolate: boolean): Promise<IngestAnswer[]> {
    const client = await this.pool.connect();
    let result: pg.QueryResult<{ r: IngestAnswer[] }>;
    try {
      // Unanswered within the timeout (the server stopped answering), the call may yet commit:
      // the outcome is unknown, as for a connection lost mid-call.
      result = await client.query<{ r: IngestAnswer[] }>({
        name: isolate ? 'signalgate-ingest-isolated' : 'signalgate-ingest',
        text: `SELECT signalgate_ingest($1, $2, $3, ${isolate}) AS r`,
        values: [batch, this.options.scope(), this.options.instance],
        query_timeout: INBOUND_ANSWER_TIMEOUT_MS,
      } as pg.QueryConfig);
    } catch (error) {
      const refused = error instanceof pg.DatabaseError && error.code !== undefined && !/^(08|57)/.test(error.code);
      // A connection that failed is not handed out again.
      client.release(refused ? undefined : (error as Error));
      throw refused ? error : new OutcomeUnknownError(error);
    }
    client.release();
    return result.rows[0]?.r ?? [];
  }
}
