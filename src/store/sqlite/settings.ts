import type { SqliteConnection } from './connection.js';

/** Named settings (e.g. the generated admin token's hash): the `settings` table. */
export class SqliteSettings {
  constructor(private readonly connection: SqliteConnection) {}

  claimSetting(name: string, value: string): string {
    return this.connection.db
      .transaction(() => {
        this.connection.stmt('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING').run(name, value);
        return (this.connection.stmt('SELECT value FROM settings WHERE name = ?').get(name) as { value: string }).value;
      })
      .immediate();
  }

  getSetting(name: string): string | null {
    const row = this.connection.stmt('SELECT value FROM settings WHERE name = ?').get(name) as
      | { value: string }
      | undefined;
    return row?.value ?? null;
  }

  setSetting(name: string, value: string): void {
    this.connection
      .stmt('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value')
      .run(name, value);
  }

  deleteSetting(name: string): void {
    this.connection.stmt('DELETE FROM settings WHERE name = ?').run(name);
  }
}
