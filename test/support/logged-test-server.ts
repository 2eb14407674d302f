import { pino } from 'pino';
import type { Config } from '../../src/config/config.js';
import { startTestServer, type TestServer } from './start-test-server.js';

export interface LoggedTestServer extends TestServer {
  /** Every JSON line the server logged so far, parsed. */
  logLines(): Array<Record<string, unknown>>;
}

/**
 * The real service, as `startTestServer` starts it, with its log kept in memory at level info,
 * so a test can read what an operator would read in the server's log.
 */
export async function startLoggedTestServer(
  config: Partial<Pick<Config, 'trustProxy'>> = {},
): Promise<LoggedTestServer> {
  let written = '';
  const server = await startTestServer({
    logger: pino({ level: 'info' }, { write: (chunk: string) => void (written += chunk) }),
    config,
  });
  return {
    ...server,
    logLines: () =>
      written
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
