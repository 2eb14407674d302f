import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgresSchema } from '../support/postgres.js';
import { CLI } from '../support/spawn-server.js';

const run = promisify(execFile);
let env: Record<string, string>;
const cleanups: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'signalgate-cli-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  env = { SIGNALGATE_DATA_DIR: dataDir, SIGNALGATE_ADMIN_TOKEN: 'cli-admin-token-0123456789', SIGNALGATE_PUBLIC_URL: 'https://sg.example.test' };
  if (process.env.SIGNALGATE_TEST_STORE === 'postgres') {
    const pg = await freshPostgresSchema();
    cleanups.push(() => pg.drop());
    env.SIGNALGATE_DATABASE_URL = pg.urlWithSchema;
  }
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, timeout: 20_000, killSignal: 'SIGKILL' });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const json = async (...args: string[]) => {
  const answer = await cli(...args);
  if (answer.code !== 0) throw new Error(`${args.join(' ')}: ${answer.stderr}`);
  return JSON.parse(answer.stdout);
};

describe("the admin CLI's lists, deletions, token rotation and daily usage", () => {
  it('lists accounts, sources and agents a page at a time, as the API does', async () => {
    const first = await json('accounts', 'create', '--name', 'One', '--quota', '5');
    const second = await json('accounts', 'create', '--name', 'Two', '--quota', '5');
    const page = await json('accounts', 'list', '--limit', '1');
    expect(page).toEqual({ accounts: [second], next: second.id });
    expect((await json('accounts', 'list', '--before', second.id)).accounts).toEqual([first]);
    const agent = await json('agents', 'create', '--account', first.id, '--name', 'box');
    const source = await json('sources', 'create', '--account', first.id, '--name', 'tv');
    expect(await json('sources', 'list', '--account', first.id)).toEqual({ sources: [source], next: null });
    const agents = await json('agents', 'list', '--account', first.id);
    expect(agents.agents.map((a: any) => a.id)).toEqual([agent.id]);
    expect(agents.agents[0]).not.toHaveProperty('token');
    expect((await json('agents', 'list', '--account', second.id)).agents).toEqual([]);
    const bad = await cli('sources', 'list', '--limit', '0');
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr)).toMatchObject({ code: 'INVALID_REQUEST', param: 'limit' });
    const daily = await json('accounts', 'daily-usage', first.id, '--days', '2');
    expect(daily.days).toEqual([
      { date: daily.from, accepted: 0, rejected: 0 },
      { date: new Date().toISOString().slice(0, 10), accepted: 0, rejected: 0 },
    ]);
  });

  it('rotates an agent token (printed once) and deletes agents and sources', async () => {
    const account = await json('accounts', 'create', '--name', 'Three', '--quota', '5');
    const agent = await json('agents', 'create', '--account', account.id, '--name', 'box');
    const routing = await json('sources', 'create', '--account', account.id, '--name', 'tv', '--agents', agent.id);
    const rotated = await json('agents', 'rotate-token', agent.id);
    expect(rotated).toMatchObject({ id: agent.id, token: expect.stringMatching(/^sga_/) });
    expect(rotated.token).not.toBe(agent.token);

    const routed = await cli('agents', 'delete', agent.id);
    expect(routed.code).toBe(1);
    expect(JSON.parse(routed.stderr)).toMatchObject({ code: 'AGENT_ROUTED', status: 409 });
    expect(await json('sources', 'delete', routing.id)).toEqual({ deleted: routing.id });
    expect(await json('agents', 'delete', agent.id)).toEqual({ deleted: agent.id });
    const gone = await cli('agents', 'show', agent.id);
    expect(gone.code).toBe(1);
    expect((await cli('sources', 'delete', routing.id)).code).toBe(1);
  });
});
