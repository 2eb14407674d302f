import { chmodSync, readdirSync } from 'node:fs';
import path from 'node:path';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  accountWithAgents,
  deliveriesOf,
  postSignal,
  sourceFor,
  waitUntil,
} from '../delivery/support/delivery-setup.js';
import { useAgentTestBed } from './support/agent-test-bed.js';
import { freePort } from '../support/free-port.js';

const WARN = 40;

/** A TCP forwarder on `port` to the server: the server "comes up" at that address when it starts. */
async function forward(port: number, target: string): Promise<net.Server> {
  const upstream = new URL(target);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    const up = net.connect(Number(upstream.port), upstream.hostname);
    for (const s of [socket, up]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
    socket.pipe(up).pipe(socket);
  });
  server.on('close', () => {
    for (const s of sockets) s.destroy();
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

describe('how the agent starts', () => {
  const bed = useAgentTestBed();

  it('refuses a wrong token before creating anything in its data directory', async () => {
    const dir = bed.stateDir();
    const agentProcess = bed.startAgent(bed.server.url, 'sga_wrong-token', dir);
    expect((await agentProcess.exited).code).toBe(2);
    expect(agentProcess.stderr).toContain('the server refused the agent token');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('names a data directory or file open to other users at each start, with the chmod that closes it; a private one is not named', async () => {
    const { server } = bed;
    const { agents } = await accountWithAgents(server, ['modes']);
    const dir = bed.stateDir();
    const openToOthers = (l: { level: number; msg: string }) =>
      l.level === WARN && l.msg.includes('open to other users');

    const first = bed.startAgent(server.url, agents[0]!.token, dir);
    await first.waitForLog((l) => l.msg.endsWith(' ready'), 'the paper account ready');
    expect(first.lines().filter(openToOthers)).toEqual([]);
    expect((await first.stop()).code).toBe(0);

    const [agentDir] = readdirSync(path.join(dir, 'agents'));
    const journal = readdirSync(path.join(dir, 'agents', agentDir!)).find(
      (name) => name.endsWith('.json') || name.endsWith('.jsonl'),
    );
    expect(journal).toBeDefined();
    const file = path.join(dir, 'agents', agentDir!, journal!);
    chmodSync(dir, 0o755);
    chmodSync(file, 0o644);
    const second = bed.startAgent(server.url, agents[0]!.token, dir);
    await second.waitForLog((l) => l.msg.endsWith(' ready'), 'the paper account ready');
    expect(
      second
        .lines()
        .filter(openToOthers)
        .map((l) => [l.msg, l.path, l.mode]),
    ).toEqual([
      [`${dir} is mode 0755, open to other users of this machine; run: chmod 0700 ${dir}`, dir, '0755'],
      [`${file} is mode 0644, open to other users of this machine; run: chmod 0600 ${file}`, file, '0644'],
    ]);
  });

  it('says the server is unreachable at its URL, creates nothing meanwhile, and connects once it answers', async () => {
    const { server } = bed;
    const { accountId, agents } = await accountWithAgents(server, ['early']);
    const source = await sourceFor(server, accountId);
    const dir = bed.stateDir();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const agentProcess = bed.startAgent(url, agents[0]!.token, dir);
    const said = await agentProcess.waitForLog((l) => l.msg.includes('unreachable'), 'the unreachable warning');
    expect(said).toMatchObject({
      level: WARN,
      server: url,
      msg: `the server is unreachable at ${url}; retrying until it answers`,
    });
    expect(said.reason).toContain('ECONNREFUSED');
    expect(readdirSync(dir)).toEqual([]);

    const up = await forward(port, server.url);
    try {
      await agentProcess.connected('websocket');
      const id = await postSignal(server.url, source.authKey, 'EURUSD,buy');
      await waitUntil(async () => (await deliveriesOf(server, id))[0].status === 'executed', 'the signal executed');
      // Said once for the outage, not once per attempt.
      expect(agentProcess.lines().filter((l) => l.msg.includes('unreachable'))).toHaveLength(1);
      expect(agentProcess.lines().some((l) => l.msg === 'WebSocket unavailable; falling back to long-poll')).toBe(
        false,
      );
    } finally {
      await agentProcess.kill();
      await new Promise<void>((resolve) => up.close(() => resolve()));
    }
  });

  it('logs a rejected signal at warn, an executed one at info', async () => {
    const { server } = bed;
    const { accountId, agents } = await accountWithAgents(server, ['levels']);
    const source = await sourceFor(server, accountId);
    const agentProcess = bed.startAgent(server.url, agents[0]!.token, bed.stateDir(), ['--seed', '1']);
    await agentProcess.connected();
    const refused = await postSignal(server.url, source.authKey, 'EURUSD,closesell');
    const bought = await postSignal(server.url, source.authKey, 'EURUSD,buy');
    await agentProcess.waitForHandled(2);
    expect(agentProcess.handled().find((l) => l.signalId === refused)).toMatchObject({
      level: WARN,
      status: 'rejected',
    });
    expect(agentProcess.handled().find((l) => l.signalId === bought)).toMatchObject({ level: 30, status: 'executed' });
  });
});
