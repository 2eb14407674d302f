import { describe, expect, it } from 'vitest';
import { useCliStore } from '../support/cli-store.js';

const { cli } = useCliStore({ SIGNALGATE_PUBLIC_URL: 'https://sg.example.test' });

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
    // The key and its URL are in the create answer only: the list shows the source without them.
    const { authKey: _key, inboundUrl: _url, ...listed } = source;
    expect(await json('sources', 'list', '--account', first.id)).toEqual({ sources: [listed], next: null });
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
