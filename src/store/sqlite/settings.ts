import type { Settings } from '../settings.js';
import type { SqliteConnection } from './connection.js';

/** Named settings (e.g. the generated admin token's hash): the `settings` table. */
export class SqliteSettings implements Settings {
  constructor(private readonly connection: SqliteConnection) {}

  async claim(name: string, value: string): Promise<string> {
    return this.connection.db
      .transaction(() => {
        this.connection
          .stmt('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING')
          .run(name, value);
        return (this.connection.stmt('SELECT value FROM settings WHERE name = ?').get(name) as { value: string }).value;
      })
      .immediate();
  }

  async get(name: string): Promise<string | null> {
    const row = this.connection.stmt('SELECT value FROM settings WHERE name = ?').get(name) as
      { value: string } | undefined;
    return row?.value ?? null;
  }

  async set(name: string, value: string): Promise<void> {
    this.connection
      .stmt('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value')
      .run(name, value);
  }

  async delete(name: string): Promise<void> {
    this.connection.stmt('DELETE FROM settings WHERE name = ?').run(name);
  }
}
