import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoggedTestServer, type LoggedTestServer } from '../support/logged-test-server.js';
import { seedSource } from '../support/seed-source.js';
import { waitUntil } from './support/delivery-setup.js';
import { RawSocket } from './support/raw-socket.js';

let server: LoggedTestServer;
beforeAll(async () => {
  server = await startLoggedTestServer();
});
afterAll(async () => {
  await server?.stop();
});

/** Opens a WebSocket and answers the HTTP status the upgrade got (101 when it opened). */
function upgradeStatus(path: string, token: string): Promise<number> {
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}${path}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return new Promise((resolve) => {
    ws.once('open', () => {
      ws.close();
      resolve(101);
    });
    ws.once('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0);
      ws.terminate();
    });
    ws.once('error', () => undefined);
  });
}

describe('WebSocket upgrades in the log', () => {
  it('get one access line each, accepted or refused, with a key in the path masked', async () => {
    const src = await seedSource(server);
    const agent = await server.admin('POST', `/api/admin/accounts/${src.accountId}/agents`, { name: 'mt5' });
    const socket = await RawSocket.open(server.url, agent.body.token);
    await socket.next((message) => message.type === 'hello');
    expect(await upgradeStatus('/api/agent/ws', 'sga_wrong')).toBe(401);
    expect(await upgradeStatus(src.inboundPath, agent.body.token)).toBe(405);

    const upgrades = () =>
      server
        .logLines()
        .filter((line) => line.msg === 'request' && line.method === 'GET')
        .map((line) => [line.url, line.statusCode]);
    // Each line is written once its answer is done, not necessarily before the client has it.
    await waitUntil(() => upgrades().length >= 3, 'the access lines of the three upgrades');
    expect(upgrades()).toEqual([
      ['/api/agent/ws', 101],
      ['/api/agent/ws', 401],
      [`/api/inbound/${src.authKey.slice(0, 4)}…`, 405],
    ]);
    expect(JSON.stringify(server.logLines())).not.toContain(src.authKey);
  });
});
