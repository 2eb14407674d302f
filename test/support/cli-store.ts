import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { freshPostgresSchema } from './postgres.js';
import { CLI } from './spawn-server.js';
import { TEST_ADMIN_TOKEN } from './test-tokens.js';

const run = promisify(execFile);

/** The admin token CLI runs' environments carry. */
export const CLI_ADMIN_TOKEN = TEST_ADMIN_TOKEN;

/**
 * The environment of CLI runs on a store of their own: a fresh data directory and, on the
 * postgres project, a fresh schema. Each is removed by the function it pushes on `cleanups`.
 */
export async function freshCliStore(
  cleanups: Array<() => Promise<void> | void>,
  extra: Record<string, string> = {},
): Promise<Record<string, string>> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'signalgate-cli-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const env: Record<string, string> = {
    SIGNALGATE_DATA_DIR: dataDir,
    SIGNALGATE_ADMIN_TOKEN: CLI_ADMIN_TOKEN,
    ...extra,
  };
  if (process.env.SIGNALGATE_TEST_STORE === 'postgres') {
    const pg = await freshPostgresSchema();
    cleanups.push(() => pg.drop());
    env.SIGNALGATE_DATABASE_URL = pg.urlWithSchema;
  }
  // The store a server would have made: admin commands refuse to start a new one unasked.
  await (await openStore({ dataDir, databaseUrl: env.SIGNALGATE_DATABASE_URL ?? null })).close();
  return env;
}

/**
 * A store of the file's own for its CLI runs: made before its tests (`env` filled then), removed
 * after them with whatever else the file pushes on `cleanups`. `cli` runs `signalgate ARGS` on it.
 */
export function useCliStore(extra: Record<string, string> = {}): {
  env: Record<string, string>;
  cleanups: Array<() => Promise<void> | void>;
  cli: (...args: string[]) => ReturnType<typeof runCli>;
} {
  const env: Record<string, string> = {};
  const cleanups: Array<() => Promise<void> | void> = [];
  beforeAll(async () => {
    Object.assign(env, await freshCliStore(cleanups, extra));
  });
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });
  return { env, cleanups, cli: (...args) => runCli(env, ...args) };
}

/** The line with which an admin command names the store it opened. */
export const STORE_LINE = /^signalgate: store: [^\n]*\n/;

/**
 * Runs `signalgate ARGS` with `env` over this process's environment, less what would point it
 * elsewhere. The line naming the store opened is taken off stderr into `store`.
 */
export async function runCli(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string; store: string | null }> {
  const ran = await runCliRaw(env, ...args);
  const line = STORE_LINE.exec(ran.stderr);
  return { ...ran, stderr: ran.stderr.replace(STORE_LINE, ''), store: line === null ? null : line[0].trim() };
}

async function runCliRaw(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const base = { ...process.env };
  for (const name of ['SIGNALGATE_PUBLIC_URL', 'HOST', 'PORT']) delete base[name];
  try {
    // Killed after a while, so a CLI that hangs fails the test instead of stalling it.
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], {
      env: { ...base, ...env },
      timeout: 20_000,
      killSignal: 'SIGKILL',
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
