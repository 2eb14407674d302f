import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Logger, pino } from 'pino';
import type { Config } from '../../src/config/config.js';
import { startService, type RunningService } from '../../src/service/start-service.js';
import { adminRequest } from './admin-client.js';
import { freshPostgresSchema } from './postgres.js';

import { TEST_ADMIN_TOKEN } from './test-tokens.js';

export { TEST_ADMIN_TOKEN };

export interface TestServer extends RunningService {
  /** Admin API call with the admin token; answers status, headers and parsed body. */
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }>;
  stop(): Promise<void>;
}

/**
 * Starts the real service on a free loopback port, on a fresh SQLite directory or, when
 * SIGNALGATE_TEST_STORE=postgres, on a fresh PostgreSQL schema.
 */
export async function startTestServer(
  opts: { logger?: Logger; config?: Partial<Pick<Config, 'trustProxy' | 'inboundThread' | 'notifications'>> } = {},
): Promise<TestServer> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'signalgate-test-'));
  const usePostgres = process.env.SIGNALGATE_TEST_STORE === 'postgres';
  const pg = usePostgres ? await freshPostgresSchema() : null;
  const service = await startService(
    {
      host: '127.0.0.1',
      port: 0,
      dataDir,
      databaseUrl: pg ? pg.connectionString : null,
      adminToken: TEST_ADMIN_TOKEN,
      publicUrl: 'http://signals.example.test',
      logLevel: opts.logger?.level ?? 'silent',
      retentionMs: 90 * 86_400_000,
      tls: null,
      trustProxy: [],
      ...opts.config,
    },
    opts.logger ?? pino({ level: 'silent' }),
    pg ? { schema: pg.schema } : {},
  );
  return {
    ...service,
    admin: (method, urlPath, body) => adminRequest(service.url, TEST_ADMIN_TOKEN, method, urlPath, body),
    // The schema and the directory go even when the service was closed already (a test of the
    // drain closes it itself) or its close fails.
    stop: async () => {
      try {
        await service.close();
      } finally {
        await pg?.drop();
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}
