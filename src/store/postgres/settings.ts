import type pg from 'pg';
import type { Settings } from '../settings.js';

/** Named settings (e.g. the generated admin token's hash): the `settings` table. */
export class PostgresSettings implements Settings {
  constructor(private readonly pool: pg.Pool) {}

  async claim(name: string, value: string): Promise<string> {
    // Two statements, not one: a CTE's snapshot might not see a row a rival committed meanwhile.
    await this.pool.query('INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
      name,
      value,
    ]);
    const { rows } = await this.pool.query<{ value: string }>('SELECT value FROM settings WHERE name = $1', [name]);
    return rows[0]!.value;
  }

  async get(name: string): Promise<string | null> {
    const { rows } = await this.pool.query<{ value: string }>('SELECT value FROM settings WHERE name = $1', [name]);
    return rows[0]?.value ?? null;
  }

  async set(name: string, value: string): Promise<void> {
    await this.pool.query(
      'INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
      [name, value],
    );
  }

  async delete(name: string): Promise<void> {
    await this.pool.query('DELETE FROM settings WHERE name = $1', [name]);
  }
}
