import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { detachResults } from '../../src/store/postgres/detached-results.js';
import { TEST_DATABASE_URL } from '../support/postgres.js';

describe("PostgreSQL pools: pg's result keeps no rows once answered", () => {
  let pool: pg.Pool | null = null;
  afterEach(async () => {
    await pool?.end();
    pool = null;
  });

  it('answers what pg answers, and leaves the result pg holds with no rows', async () => {
    // As the store's pools are: with a query_timeout, whose wrapper keeps pg's query (and its result) alive.
    pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1, query_timeout: 10_000 });
    const held: pg.QueryResult[] = [];
    const original = pool.query.bind(pool) as (...args: unknown[]) => Promise<pg.QueryResult>;
    (pool as { query: unknown }).query = (...args: unknown[]) => {
      const answer = original(...args);
      answer.then(
        (result) => held.push(result),
        () => undefined,
      );
      return answer;
    };
    detachResults(pool);
    const result = await pool.query<{ n: number; s: string }>(
      "SELECT n, 'row ' || n AS s FROM generate_series(1, 3) AS n",
    );
    expect(result.rows).toEqual([
      { n: 1, s: 'row 1' },
      { n: 2, s: 'row 2' },
      { n: 3, s: 'row 3' },
    ]);
    expect(result.rowCount).toBe(3);
    expect(result.command).toBe('SELECT');
    expect(result.fields.map((field) => field.name)).toEqual(['n', 's']);
    expect(held).toHaveLength(1);
    expect(held[0]!.rows).toEqual([]);
    // With parameters, and a statement that fails still fails.
    expect((await pool.query<{ v: string }>('SELECT $1::text AS v', ['x'])).rows).toEqual([{ v: 'x' }]);
    await expect(pool.query('SELECT * FROM no_such_table_here')).rejects.toThrow(/no_such_table_here/);
  });

  it('leaves the callback form as it was', async () => {
    pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1 });
    detachResults(pool);
    const rows = await new Promise<unknown[]>((resolve, reject) => {
      const returned = pool!.query('SELECT 7 AS seven', (error: Error | undefined, result: pg.QueryResult) =>
        error ? reject(error) : resolve(result.rows),
      );
      expect(returned).toBeUndefined();
    });
    expect(rows).toEqual([{ seven: 7 }]);
  });
});
