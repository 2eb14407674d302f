import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { startService } from '../../../src/service/start-service.js';
import { adminRequest } from '../../support/admin-client.js';
import { freshPostgresSchema } from '../../support/postgres.js';
import { TEST_ADMIN_TOKEN, type TestServer } from '../../support/start-test-server.js';

export interface LoggedTestServer extends TestServer {
  /** Every JSON line the server logged so far, parsed. */
  logLines(): Array<Record<string, unknown>>;
}

/**
 * The real service, as `startTestServer` starts it (SQLite, or PostgreSQL when
 * SIGNALGATE_TEST_STORE=postgres), with its log kept in memory at level info, so a test can
 * read what an operator would read in the server's log.
 */
export async function startLoggedTestServer(): Promise<LoggedTestServer> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'signalgate-test-'));
  const pg = process.env.SIGNALGATE_TEST_STORE === 'postgres' ? await freshPostgresSchema('logged') : null;
  let written = '';
  const logger = pino({ level: 'info' }, { write: (chunk: string) => void (written += chunk) });
  const service = await startService(
    {
      host: '127.0.0.1',
      port: 0,
      dataDir,
      databaseUrl: pg ? pg.connectionString : null,
      adminToken: TEST_ADMIN_TOKEN,
      publicUrl: 'http://signals.example.test',
      logLevel: 'info',
    },
    logger,
    pg ? { schema: pg.schema } : {},
  );
  return {
    ...service,
    admin: (method, urlPath, body) => adminRequest(service.url, TEST_ADMIN_TOKEN, method, urlPath, body),
    logLines: () =>
      written
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    stop: async () => {
      await service.close();
      await pg?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
