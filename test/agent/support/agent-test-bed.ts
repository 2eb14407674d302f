import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startTestServer, type TestServer } from '../../support/start-test-server.js';
import { AgentProcess } from './agent-process.js';

export interface AgentTestBed {
  /** The server started for the `describe` (before its first test, stopped after its last). */
  readonly server: TestServer;
  /** A fresh, empty agent data directory, removed after the test. */
  stateDir(): string;
  /** `AgentProcess.start`, with the process killed after the test (if it is still running). */
  startAgent(url: string, token: string, dataDir: string, args?: string[]): AgentProcess;
}

/**
 * The setup every agent process test needs, in one place: call it inside a `describe` to get
 * a running server for the block, plus agent processes and data directories that are cleaned
 * up after each test whether it passed or not, so no test has to track them itself.
 */
export function useAgentTestBed(): AgentTestBed {
  let server: TestServer | undefined;
  const agents: AgentProcess[] = [];
  const dirs: string[] = [];

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterEach(async () => {
    for (const agent of agents.splice(0)) await agent.kill();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  afterAll(async () => {
    await server?.stop();
  });

  return {
    get server() {
      if (!server) throw new Error('the test server starts in beforeAll; use it from a hook or test');
      return server;
    },
    stateDir() {
      const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-agent-'));
      dirs.push(dir);
      return dir;
    },
    startAgent(url, token, dataDir, args = []) {
      const agent = AgentProcess.start(url, token, dataDir, args);
      agents.push(agent);
      return agent;
    },
  };
}
