import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithAgents, sourceFor } from '../delivery/support/delivery-setup.js';
import { startTestServer, type TestServer } from '../support/start-test-server.js';

/**
 * Every message of docs/tradingview.md (a ```signal block) is sent to a running server as
 * TradingView sends it, and must become the normalized signal in the ```json block after it.
 */
const DOC = readFileSync(new URL('../../docs/tradingview.md', import.meta.url), 'utf8');
const BLOCK = /```(\w+)\n([\s\S]*?)```/g;
const blocks = [...DOC.matchAll(BLOCK)].map((match) => ({ lang: match[1]!, text: match[2]!.trim() }));
const examples = blocks.flatMap((block, i) => {
  if (block.lang !== 'signal') return [];
  const next = blocks[i + 1];
  if (next?.lang !== 'json') throw new Error(`the signal block '${block.text}' in docs/tradingview.md has no json block after it`);
  return [{ message: block.text, expected: JSON.parse(next.text) as unknown }];
});

describe('the messages of docs/tradingview.md', () => {
  let server: TestServer;
  let authKey: string;
  beforeAll(async () => {
    server = await startTestServer();
    const { accountId } = await accountWithAgents(server, ['paper']);
    authKey = (await sourceFor(server, accountId)).authKey;
  });
  afterAll(() => server?.stop());

  it('has messages to check', () => {
    expect(examples.length).toBeGreaterThanOrEqual(6);
  });

  it.each(examples)('$message', async ({ message, expected }) => {
    // As TradingView posts an alert's message: text/plain.
    const res = await fetch(`${server.url}/api/inbound/${authKey}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: message,
    });
    const body = (await res.json()) as { signal: unknown; agents: number };
    expect(res.status, JSON.stringify(body)).toBe(202);
    expect(body.signal).toEqual(expected);
    expect(body.agents).toBe(1);
  });
});
