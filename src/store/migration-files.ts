import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** One numbered SQL file from `migrations/<dialect>/`, e.g. `001_initial.sql`. */
export interface MigrationFile {
  version: number;
  name: string;
  sql: string;
}

export type Dialect = 'sqlite' | 'postgres';

const FILE_NAME = /^(\d+)_([A-Za-z0-9_-]+)\.sql$/;

/**
 * The directory holding a dialect's migrations. This module sits at `src/store/` under the
 * test runner and at `dist/store/` after the build: both are two levels below the project
 * root, where `migrations/` lives, so one relative URL serves both.
 */
export function migrationDirectory(dialect: Dialect): string {
  return fileURLToPath(new URL(`../../migrations/${dialect}/`, import.meta.url));
}

/** The dialect's migrations in version order. Two files with one version are an error. */
export function readMigrationFiles(dialect: Dialect): MigrationFile[] {
  const directory = migrationDirectory(dialect);
  const files: MigrationFile[] = [];
  for (const entry of readdirSync(directory)) {
    const match = FILE_NAME.exec(entry);
    if (!match) continue;
    files.push({
      version: Number(match[1]),
      name: match[2]!,
      sql: readFileSync(directory + entry, 'utf8'),
    });
  }
  files.sort((a, b) => a.version - b.version);
  for (let i = 1; i < files.length; i++) {
    if (files[i]!.version === files[i - 1]!.version) {
      throw new Error(`two ${dialect} migrations share version ${files[i]!.version} in ${directory}`);
    }
  }
  return files;
}

/**
 * The dialect's server-side functions (`migrations/<dialect>/functions.sql`), applied by every
 * migrate after the numbered migrations, and the revision the file declares in its last line's
 * COMMENT (`signalgate functions revision N`).
 */
export interface FunctionsFile {
  revision: number;
  sql: string;
}

const FUNCTIONS_REVISION = /^signalgate functions revision (\d+)$/;

/** The revision a function's COMMENT names, or 0 when it names none (defined by a numbered migration). */
export function functionsRevisionOf(comment: string | null): number {
  const match = comment === null ? null : FUNCTIONS_REVISION.exec(comment);
  return match ? Number(match[1]) : 0;
}

export function readFunctionsFile(dialect: Dialect): FunctionsFile {
  const path = migrationDirectory(dialect) + 'functions.sql';
  const sql = readFileSync(path, 'utf8');
  const comments = [...sql.matchAll(/^COMMENT ON FUNCTION .* IS '([^']*)';$/gm)].map((match) =>
    functionsRevisionOf(match[1]!),
  );
  if (comments.length !== 1 || comments[0] === 0) {
    throw new Error(`${path} must end with one COMMENT ON FUNCTION naming 'signalgate functions revision N'`);
  }
  return { revision: comments[0]!, sql };
}
