import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/start-test-server.js';
import { accountWithAgents } from '../delivery/support/delivery-setup.js';
import { AgentProcess } from './support/agent-process.js';
import { freePort } from '../support/free-port.js';

/**
 * A FIX broker that is down (nothing listens at its address) is tried again after 1 s, then
 * after twice as long each time, up to 30 s: not in a tight loop that floods the log and burns
 * the CPU while the broker is away.
 */
describe('an agent whose FIX broker is down', () => {
  let server: TestServer;
  let dir: string;
  let agent: AgentProcess | null = null;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'signalgate-fix-down-'));
    server = await startTestServer();
  });

  afterAll(async () => {
    await agent?.kill();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('tries again with a doubling delay, logging each attempt once', async () => {
    const { agents } = await accountWithAgents(server, ['fix-down']);
    const [tradePort, quotePort] = [await freePort(), await freePort()];
    const configFile = path.join(dir, 'fix.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        dialect: 'fix44',
        trade: {
          host: '127.0.0.1',
          port: tradePort,
          senderCompId: 'SGAGENT',
          targetCompId: 'BROKER',
          heartbeatSeconds: 30,
          tls: false,
        },
        quote: {
          host: '127.0.0.1',
          port: quotePort,
          senderCompId: 'SGAGENT',
          targetCompId: 'BROKER',
          senderSubId: 'QUOTE',
          targetSubId: 'QUOTE',
          heartbeatSeconds: 30,
          tls: false,
        },
        account: { currency: 'USD', balance: 10000 },
        instruments: {
          EURUSD: {
            brokerSymbol: 'EURUSD',
            digits: 5,
            contractSize: 100000,
            lotMin: 0.01,
            lotStep: 0.01,
            lotMax: 50,
            quoteCurrency: 'USD',
          },
        },
      }),
    );
    agent = AgentProcess.startVenue(
      server.url,
      agents[0]!.token,
      path.join(dir, 'agent'),
      ['--venue', 'fix', '--fix-config', configFile],
      {
        SIGNALGATE_FIX_USERNAME: 'trader-1',
        SIGNALGATE_FIX_PASSWORD: 'pw-down-1',
      },
    );
    await agent.waitForLog(
      (l) => l.msg === 'FIX session down; reconnecting' && l.fix === 'trade',
      'the first failed attempt',
    );
    const first = Date.now();
    // Attempts at about 0, 1, 3 and 7 s: within 5 s of the first failure, at most three more.
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const seconds = (Date.now() - first) / 1000;
    const tradeLines = agent.lines().filter((l) => l.fix === 'trade' || l.fixSession === 'trade');
    const attempts = tradeLines.filter((l) => l.msg === 'FIX connecting');
    const retries = agent.lines().filter((l) => l.msg === 'FIX session down; reconnecting' && l.fix === 'trade');
    expect(attempts.length, `attempts to reach the trade session in ${seconds} s`).toBeGreaterThanOrEqual(2);
    expect(attempts.length, `attempts to reach the trade session in ${seconds} s`).toBeLessThanOrEqual(4);
    // Each delay is its step (1 s, 2 s, 4 s…) less up to half of it, drawn at random.
    retries.slice(0, 3).forEach((l, i) => {
      expect(l.retryInMs).toBeGreaterThanOrEqual(500 * 2 ** i);
      expect(l.retryInMs).toBeLessThanOrEqual(1000 * 2 ** i);
    });
    // The whole log stays small: a handful of lines an attempt, not thousands.
    expect(agent.lines().length, 'log lines in the agent while the broker is down').toBeLessThan(150);
  });
});
