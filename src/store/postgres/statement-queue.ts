import type pg from 'pg';

/**
 * The statements of one dedicated `pg.Client`, sent one at a time in the order they were asked
 * for. The driver queues a query issued while another is under way, but warns that it will stop
 * doing so (pg 9); what shares a connection queues here instead. A turn may run several
 * statements (awaited one after another); the next turn starts once it has settled, whether it
 * succeeded or failed. A turn's work is called only when its turn comes, so what it sends can
 * depend on what happened before it (a hand-out leaves out sessions released meanwhile).
 */
export class StatementQueue {
  private tail: Promise<unknown> = Promise.resolve();

  constructor(readonly client: pg.Client) {}

  /** Runs `work` on the client once every turn asked for before it has settled. */
  turn<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
    const result = this.tail.then(() => work(this.client));
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** One statement as a turn of its own. */
  query<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    return this.turn((client) => client.query<R>(text, values));
  }
}
