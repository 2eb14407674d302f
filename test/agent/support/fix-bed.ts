import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startTestServer, type TestServer } from '../../support/start-test-server.js';
import { accountWithAgents, deliveriesOf, sourceFor, waitUntil } from '../../delivery/support/delivery-setup.js';
import { AgentProcess } from './agent-process.js';

/** What a bed needs of a FIX counterparty on jspurefix's acceptor side. */
export interface FixCounterparty {
  readonly received: { type: string; message: object }[];
  /** `onMessage` is called with every application message it receives, as it arrives. */
  readonly options: { onMessage?: (type: string, message: Record<string, unknown>) => void };
  start(): void;
  stop(): void;
  agentConfig(balance: number): object;
}

export interface FixBed<B extends FixCounterparty> {
  readonly server: TestServer;
  readonly broker: B;
  /** The signal source's key, for postSignal. */
  readonly authKey: string;
  /** The agent's account, for the admin API (the ledger's trades). */
  readonly accountId: string;
  /** `signalgate agent --venue fix` on the broker's session file (and `args`), always on the same data directory; killed after the block. */
  start(args?: string[]): AgentProcess;
  /** `start`, resolved once the agent says its venue is ready. */
  startReady(args?: string[]): Promise<AgentProcess>;
  /**
   * Kills `agent` with SIGKILL the moment the broker receives an application message `match`
   * takes (whatever the test does next sets it off), and resolves with that message once the
   * agent has exited: the agent dies with the message sent and its answer unread. Rejects if the
   * agent exits before such a message. The broker's hook is put back once the agent has exited,
   * or after the test, whichever comes first.
   */
  killAgentWhenBrokerReceives(
    agent: AgentProcess,
    match: (type: string, message: Record<string, unknown>) => boolean,
  ): Promise<Record<string, unknown>>;
  /** The agent's published state. */
  state(): Promise<any>;
  /** The signal's delivery once acknowledged with `status`. */
  settled(signal: string, status?: string): Promise<any>;
  /** The application messages of one type the broker received, in order. */
  sent(type: string): Record<string, unknown>[];
}

/**
 * One server, one FIX counterparty (made by `broker`, started here) and the agent's session file
 * for it (balance 10,000), for a `describe` block: the agent logs on with `credentials` from the
 * environment, as an operator's would.
 */
export function useFixBed<B extends FixCounterparty>(options: {
  name: string;
  credentials: { user: string; password: string };
  broker: () => Promise<B>;
  /** The signal source's maxSignalAgeSeconds (the server's default when absent). */
  maxSignalAgeSeconds?: number;
}): FixBed<B> {
  let server: TestServer | undefined;
  let broker: B | undefined;
  let dir = '';
  let configFile = '';
  let token = '';
  let agentId = '';
  let authKey = '';
  let accountId = '';
  const agents: AgentProcess[] = [];
  /** Puts back the broker's message hook as it was before killAgentWhenBrokerReceives. */
  let disarm: (() => void) | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), `signalgate-${options.name}-`));
    server = await startTestServer();
    broker = await options.broker();
    broker.start();
    configFile = path.join(dir, 'fix.json');
    writeFileSync(configFile, JSON.stringify(broker.agentConfig(10000)));
    const made = await accountWithAgents(server, [options.name]);
    token = made.agents[0]!.token;
    agentId = made.agents[0]!.id;
    accountId = made.accountId;
    authKey = (
      await sourceFor(
        server,
        made.accountId,
        options.maxSignalAgeSeconds === undefined ? {} : { maxSignalAgeSeconds: options.maxSignalAgeSeconds },
      )
    ).authKey;
  });

  // A test that failed before its agent died must not leave a hook to kill the next test's agent.
  afterEach(() => disarm?.());

  afterAll(async () => {
    for (const agent of agents) await agent.kill();
    broker?.stop();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const bed: FixBed<B> = {
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
    get accountId() {
      return accountId;
    },
    start(args = []) {
      const agent = AgentProcess.startVenue(
        bed.server.url,
        token,
        path.join(dir, 'agent'),
        ['--venue', 'fix', '--fix-config', configFile, ...args],
        {
          SIGNALGATE_FIX_USERNAME: options.credentials.user,
          SIGNALGATE_FIX_PASSWORD: options.credentials.password,
        },
      );
      agents.push(agent);
      return agent;
    },
    async startReady(args = []) {
      const agent = bed.start(args);
      await agent.waitForLog((l) => l.msg === 'venue ready', 'the venue ready', 40_000);
      return agent;
    },
    async killAgentWhenBrokerReceives(agent, match) {
      const hooks = bed.broker.options;
      const before = hooks.onMessage;
      let received: Record<string, unknown> | undefined;
      hooks.onMessage = (type, message) => {
        before?.(type, message);
        if (received !== undefined || !match(type, message)) return;
        received = message;
        agent.child.kill('SIGKILL');
      };
      disarm = () => {
        hooks.onMessage = before;
        disarm = undefined;
      };
      await agent.exited;
      disarm?.();
      if (received === undefined)
        throw new Error(
          `the agent exited before the broker received the message awaited:\n${agent.stdout.slice(-5000)}\n${agent.stderr}`,
        );
      return received;
    },
    async state() {
      return (await bed.server.admin('GET', `/api/admin/agents/${agentId}`)).body.state;
    },
    async settled(signal, status = 'executed') {
      await waitUntil(
        async () => (await deliveriesOf(bed.server, signal))[0].status === status,
        `the ${status} ack of ${signal}`,
        30_000,
      );
      return (await deliveriesOf(bed.server, signal))[0];
    },
    sent(type) {
      return bed.broker.received.filter((r) => r.type === type).map((r) => r.message as Record<string, unknown>);
    },
  };
  return bed;
}
