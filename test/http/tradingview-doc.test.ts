import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentProcess } from '../agent/support/agent-process.js';
import { accountWithAgents, postSignal, settledDeliveriesOf, sourceFor } from '../delivery/support/delivery-setup.js';
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
  if (next?.lang !== 'json')
    throw new Error(`the signal block '${block.text}' in docs/tradingview.md has no json block after it`);
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

/** The instruments file the page tells a paper agent to use: `echo '{…}' > FILE` in its sh blocks. */
const INSTRUMENTS = /^echo '(\{.*\})' > (\S+\.json)$/m.exec(
  blocks
    .filter((block) => block.lang === 'sh')
    .map((block) => block.text)
    .join('\n'),
);

describe('the messages of docs/tradingview.md, on the paper agent the page says to start', () => {
  let server: TestServer;
  let dir: string;
  let agent: AgentProcess;
  let authKey: string;
  beforeAll(async () => {
    server = await startTestServer();
    dir = mkdtempSync(path.join(tmpdir(), 'signalgate-tv-paper-'));
    const { accountId, agents } = await accountWithAgents(server, ['paper']);
    authKey = (await sourceFor(server, accountId)).authKey;
    const instruments = path.join(dir, INSTRUMENTS![2]!);
    writeFileSync(instruments, INSTRUMENTS![1]!);
    agent = AgentProcess.start(server.url, agents[0]!.token, path.join(dir, 'agent'), [
      '--instruments',
      instruments,
      '--seed',
      '7',
    ]);
    await agent.connected();
  });
  afterAll(async () => {
    await agent?.kill();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the page gives the instruments file, and the agent says at start which symbols it trades', () => {
    expect(INSTRUMENTS).not.toBeNull();
    const said = agent.lines().find((line) => line.msg.startsWith('the paper feed prices only these symbols'));
    expect(said?.symbols).toEqual(expect.arrayContaining(['BTCUSDT', 'ETHUSDT', 'EURUSD', 'XAUUSD']));
  });

  // A close with nothing open is rejected, rightly; a symbol the agent cannot trade never is.
  it.each(examples)('$message is traded, not refused for its symbol', async ({ message }) => {
    const id = await postSignal(server.url, authKey, message);
    const [delivery] = await settledDeliveriesOf(server, id, `${message} handled`);
    expect(['executed', 'rejected'], `${delivery.status}: ${delivery.message}`).toContain(delivery.status);
    expect(delivery.message ?? '').not.toMatch(/not in the paper feed|unknown (symbol|instrument)|is not a market/i);
  });
});
