import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ONE_BUFFER_FROM_CHARACTERS } from '../../src/admin/json-page-body.js';
import { accountWithAgents } from '../delivery/support/delivery-setup.js';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/start-test-server.js';

/**
 * A page of the agents' list carries each agent's published state as the store holds its text,
 * and a long page is encoded to UTF-8 agent by agent. What it answers must stay, byte for byte,
 * what `JSON.stringify` writes of the agents as the admin API shows each one (what the list
 * answered before): the same keys in the same order, the same escapes, the same numbers.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

const AGENT_KEYS = ['id', 'name', 'accountId', 'createdAt', 'lastSeenAt', 'state'];
const AWKWARD = 'he said "hi" \\ back\\slash / é ü 中文 😀 \u0001\t\n\u2028\u2029\u007f';

/** Publishes `body` (JSON text, parsed by the server as any agent's report is) as the agent's state. */
async function publish(token: string, body: string): Promise<void> {
  const res = await fetch(`${server.url}/api/agent/state`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body,
  });
  expect(res.status, body.slice(0, 80)).toBe(200);
}

async function read(query: string): Promise<{ res: Response; bytes: Buffer }> {
  const res = await fetch(`${server.url}/api/admin/agents?${query}`, {
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
  });
  return { res, bytes: Buffer.from(await res.arrayBuffer()) };
}

/**
 * The agents' ids in the list's order: newest first, by creation time and then by id. Agents made
 * one after another can share a millisecond, so their order of creation does not settle it.
 */
async function newestFirst(ids: string[]): Promise<string[]> {
  const created = new Map<string, string>();
  for (const id of ids) {
    const shown = await server.admin('GET', `/api/admin/agents/${id}`);
    expect(shown.status).toBe(200);
    created.set(id, (shown.body as { createdAt: string }).createdAt);
  }
  const key = (id: string) => `${created.get(id)!} ${id}`;
  return [...ids].sort((a, b) => (key(a) < key(b) ? 1 : key(a) > key(b) ? -1 : 0));
}

/** `JSON.stringify` of the page as the agents' own views show them (each read by id, its state parsed). */
async function expectedPage(ids: string[], next: string | null): Promise<string> {
  const agents = [];
  for (const id of ids) {
    const shown = await server.admin('GET', `/api/admin/agents/${id}`);
    expect(shown.status).toBe(200);
    agents.push(shown.body);
  }
  return JSON.stringify({ agents, next });
}

describe('a page of the agents', () => {
  it("answers JSON.stringify's text of the agents' views, byte for byte, their states written as published", async () => {
    const { accountId, agents } = await accountWithAgents(server, [
      'plain',
      'Awkward "name" \\ 😀',
      'no state yet',
      'numbers',
    ]);
    const [plain, awkward, , numbers] = agents as [
      (typeof agents)[0],
      (typeof agents)[0],
      (typeof agents)[0],
      (typeof agents)[0],
    ];
    await publish(plain.token, '{"balance":10000,"equity":10012.5,"currency":"USD","positions":[],"orders":[]}');
    // Spaces and escapes as a client might send them: stored as the server writes them again.
    await publish(
      awkward.token,
      ` { "currency" : "EUR", "positions" : [ { "symbol" : "EURUSD", "comment" : ${JSON.stringify(AWKWARD)}, "escaped" : "\\u00e9\\u4e2d\\ud83d\\ude00\\/" } ],\n "nested" : { "a" : [ 1, [ 2, { "b" : null } ] ] }, "empty" : { }, "flag" : true } `,
    );
    // Numbers JavaScript writes differently from how they were sent.
    await publish(
      numbers.token,
      '{"balance":1.50,"equity":1E3,"big":12345678901234567890,"tiny":1e-7,"huge":1e21,"negativeZero":-0,"list":[0.1,2.50e2]}',
    );

    const ids = await newestFirst(agents.map((a) => a.id));
    for (const [query, pageIds, next] of [
      [`accountId=${accountId}`, ids, null],
      [`accountId=${accountId}&limit=2`, ids.slice(0, 2), ids[1]!],
      [`accountId=${accountId}&limit=2&before=${ids[1]}`, ids.slice(2), null],
    ] as const) {
      const { res, bytes } = await read(query);
      expect(res.status, query).toBe(200);
      expect(res.headers.get('content-type'), query).toBe('application/json; charset=utf-8');
      expect(res.headers.get('content-length'), query).toBe(String(bytes.length));
      const text = bytes.toString('utf8');
      expect(text, query).toBe(await expectedPage([...pageIds], next));
      const parsed = JSON.parse(text) as { agents: Record<string, unknown>[] };
      for (const agent of parsed.agents) expect(Object.keys(agent), query).toEqual(AGENT_KEYS);
    }

    const page = JSON.parse((await read(`accountId=${accountId}`)).bytes.toString('utf8')) as {
      agents: { id: string; name: string; state: any }[];
    };
    const byId = new Map(page.agents.map((a) => [a.id, a]));
    expect(byId.get(awkward.id)).toMatchObject({
      name: 'Awkward "name" \\ 😀',
      state: { positions: [{ comment: AWKWARD, escaped: 'é中😀/' }], nested: { a: [1, [2, { b: null }]] } },
    });
    expect(byId.get(numbers.id)!.state).toEqual({
      balance: 1.5,
      equity: 1000,
      big: 12345678901234567000,
      tiny: 1e-7,
      huge: 1e21,
      negativeZero: 0,
      list: [0.1, 250],
    });
    expect(byId.get(agents[2]!.id)!.state).toBeNull();
  });

  it('answers a long page, made as bytes rather than one string, with the same bytes as JSON.stringify', async () => {
    // States of 2-, 3- and 4-byte characters and of what JSON escapes or not, ~6 KB each: a page
    // of twenty is far over the characters from which a page is answered as bytes.
    const names = Array.from({ length: 20 }, (_, k) => `terminal ${k} ½€𝄞`);
    const { accountId, agents } = await accountWithAgents(server, names);
    const piece = `${AWKWARD} ½€𝄞 "q" \\ `;
    for (const [k, agent] of agents.entries()) {
      const positions = Array.from({ length: 16 }, (_, p) => ({
        position: p,
        symbol: 'XAUUSD',
        volume: 0.01 * (p + 1),
        comment: piece.repeat(4 + ((k + p) % 5)),
      }));
      await publish(
        agent.token,
        JSON.stringify({ balance: 10_000 + k, equity: 10_000.25 + k, currency: 'USD', positions, orders: [] }),
      );
    }
    const ids = await newestFirst(agents.map((a) => a.id));
    for (const [query, pageIds, next, over] of [
      [`accountId=${accountId}&limit=500`, ids, null, true],
      [`accountId=${accountId}&limit=500&before=${ids[1]}`, ids.slice(2), null, true],
      [`accountId=${accountId}&limit=1`, ids.slice(0, 1), ids[0]!, false],
    ] as const) {
      const { res, bytes } = await read(query);
      expect(res.status, query).toBe(200);
      expect(res.headers.get('content-length'), query).toBe(String(bytes.length));
      const expected = await expectedPage([...pageIds], next);
      expect(expected.length >= ONE_BUFFER_FROM_CHARACTERS, query).toBe(over);
      expect(bytes.equals(Buffer.from(expected)), query).toBe(true);
      expect(bytes.toString('utf8'), query).toBe(expected); // where they differ, when they do
    }
  });
});
