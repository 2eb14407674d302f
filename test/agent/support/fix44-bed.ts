import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { Fix44Counterparty } from '../../../src/bench/fix44-counterparty.js';
import { freePort } from '../../../src/bench/free-port.js';
import { startTestServer, type TestServer } from '../../support/start-test-server.js';
import { accountWithAgents, deliveriesOf, sourceFor, waitUntil } from '../../delivery/support/delivery-setup.js';
import { AgentProcess } from './agent-process.js';

export const AGENT_COMP_ID = 'SGAGENT44';
export const CREDENTIALS = { user: 'trader-44', password: 'pw-fix44-554' };

export interface Fix44Bed {
  readonly server: TestServer;
  readonly broker: Fix44Counterparty;
  /** The signal source's key, for postSignal. */
  readonly authKey: string;
  /** `signalgate agent --venue fix` on the session file (dialect fix44), always on the same data directory; killed after the block. */
  start(): AgentProcess;
  /** The agent's published state. */
  state(): Promise<any>;
  /** The signal's delivery once acknowledged with `status`. */
  settled(signal: string, status?: string): Promise<any>;
  /** The application messages of one type the broker received, in order. */
  sent(type: string): Record<string, unknown>[];
}

/** One server, one plain FIX 4.4 counterparty (EURUSD at 1.1050/1.1052) and the session file for it, for a `describe` block. */
export function useFix44Bed(): Fix44Bed {
  let server: TestServer | undefined;
  let broker: Fix44Counterparty | undefined;
  let dir = '';
  let configFile = '';
  let token = '';
  let agentId = '';
  let authKey = '';
  const agents: AgentProcess[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'signalgate-fix44-'));
    server = await startTestServer();
    broker = new Fix44Counterparty({ port: await freePort(), agentCompId: AGENT_COMP_ID, credentials: CREDENTIALS, prices: { EURUSD: { bid: 1.105, ask: 1.1052 } } });
    broker.start();
    configFile = path.join(dir, 'fix.json');
    writeFileSync(configFile, JSON.stringify(broker.agentConfig(10000)));
    const made = await accountWithAgents(server, ['fix44']);
    token = made.agents[0]!.token;
    agentId = made.agents[0]!.id;
    authKey = (await sourceFor(server, made.accountId)).authKey;
  });

  afterAll(async () => {
    for (const agent of agents) await agent.kill();
    broker?.stop();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const bed: Fix44Bed = {
    get server() {
      if (!server) throw new Error('the test server starts in beforeAll; use it from a hook or test');
      return server;
    },
    get broker() {
      if (!broker) throw new Error('the counterparty starts in beforeAll; use it from a hook or test');
      return broker;
    },
    get authKey() {
      return authKey;
    },
    start() {
      const agent = AgentProcess.startVenue(bed.server.url, token, path.join(dir, 'agent'), ['--venue', 'fix', '--fix-config', configFile], {
        SIGNALGATE_FIX_USERNAME: CREDENTIALS.user,
        SIGNALGATE_FIX_PASSWORD: CREDENTIALS.password,
      });
      agents.push(agent);
      return agent;
    },
    async state() {
      return (await bed.server.admin('GET', `/api/admin/agents/${agentId}`)).body.state;
    },
    async settled(signal, status = 'executed') {
      await waitUntil(async () => (await deliveriesOf(bed.server, signal))[0].status === status, `the ${status} ack of ${signal}`, 30_000);
      return (await deliveriesOf(bed.server, signal))[0];
    },
    sent(type) {
      return bed.broker.received.filter((r) => r.type === type).map((r) => r.message);
    },
  };
  return bed;
}
