import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoggedTestServer, startLoggedTestServer } from '../support/logged-test-server.js';
import { post } from '../support/seed-source.js';

/**
 * A source's key is shown in the answers that make it (creation, rotation) and never again: the
 * store keeps its digest and its first 4 characters. Its HMAC secret is in no answer and no log line.
 */

let server: LoggedTestServer;
beforeAll(async () => {
  server = await startLoggedTestServer();
});
afterAll(async () => {
  await server?.stop();
});

const SECRET = 'hmac-secret-never-shown-42';
const TEXT = { 'content-type': 'text/plain' };

describe('source keys and secrets', () => {
  it('shows the key and inbound URL once at creation; every later view shows only its hint', async () => {
    const account = await server.admin('POST', '/api/admin/accounts', { name: 'Keys', monthlySignalQuota: 100 });
    const created = await server.admin('POST', '/api/admin/sources', {
      accountId: account.body.id,
      name: 'alerts',
      hmacSecret: SECRET,
    });
    expect(created.status).toBe(201);
    const key: string = created.body.authKey;
    expect(key).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(created.body).toMatchObject({
      authKeyHint: key.slice(0, 4),
      inboundUrl: `http://signals.example.test/api/inbound/${key}`,
      hmac: true,
    });

    const shown = await server.admin('GET', `/api/admin/sources/${created.body.id}`);
    const listed = await server.admin('GET', `/api/admin/sources?accountId=${account.body.id}`);
    const patched = await server.admin('PATCH', `/api/admin/sources/${created.body.id}`, { name: 'renamed' });
    const { authKey: _key, inboundUrl: _url, ...rest } = created.body;
    expect(shown.body).toEqual(rest);
    expect(listed.body.sources).toEqual([rest]);
    expect(patched.body).toEqual({ ...rest, name: 'renamed' });
    for (const answer of [shown.body, listed.body, patched.body]) {
      expect(JSON.stringify(answer)).not.toContain(key);
      expect(JSON.stringify(answer)).not.toContain(SECRET);
    }
    expect(JSON.stringify(created.body)).not.toContain(SECRET);

    // The key still works: the server compares its digest.
    const signed = await post(server.url + `/api/inbound/${key}`, 'EURUSD,buy', {
      ...TEXT,
      'x-signalgate-secret': SECRET,
    });
    expect(signed.status).toBe(202);
  });

  it('shows a rotated key and its inbound URL once; the old key is refused and the new one works', async () => {
    const account = await server.admin('POST', '/api/admin/accounts', { name: 'Rotate', monthlySignalQuota: 100 });
    const created = await server.admin('POST', '/api/admin/sources', {
      accountId: account.body.id,
      name: 'alerts',
      hmacSecret: SECRET,
    });
    const rotated = await server.admin('POST', `/api/admin/sources/${created.body.id}/rotate-key`);
    expect(rotated.status).toBe(200);
    const key: string = rotated.body.authKey;
    expect(key).not.toBe(created.body.authKey);
    expect(rotated.body).toMatchObject({
      authKeyHint: key.slice(0, 4),
      inboundUrl: `http://signals.example.test/api/inbound/${key}`,
    });
    expect(JSON.stringify(rotated.body)).not.toContain(SECRET);

    const shown = await server.admin('GET', `/api/admin/sources/${created.body.id}`);
    expect(shown.body).toMatchObject({ authKeyHint: key.slice(0, 4) });
    expect(shown.body).not.toHaveProperty('authKey');
    expect(shown.body).not.toHaveProperty('inboundUrl');

    const headers = { ...TEXT, 'x-signalgate-secret': SECRET };
    expect((await post(server.url + `/api/inbound/${created.body.authKey}`, 'EURUSD,buy', headers)).status).toBe(401);
    expect((await post(server.url + `/api/inbound/${key}`, 'EURUSD,buy', headers)).status).toBe(202);
  });

  it('writes neither a source key nor an HMAC secret into any log line, whatever the request', async () => {
    const account = await server.admin('POST', '/api/admin/accounts', { name: 'Logs', monthlySignalQuota: 100 });
    const created = await server.admin('POST', '/api/admin/sources', {
      accountId: account.body.id,
      name: 'alerts',
      hmacSecret: SECRET,
    });
    const key: string = created.body.authKey;
    await post(server.url + `/api/inbound/${key}`, 'EURUSD,buy', { ...TEXT, 'x-signalgate-secret': SECRET });
    await post(server.url + `/api/inbound/${key}`, 'EURUSD,buy', { ...TEXT, 'x-signalgate-secret': `${SECRET}-wrong` });
    await post(server.url + `/api/inbound/${key}`, 'EURUSD,buy', TEXT);
    await server.admin('PATCH', `/api/admin/sources/${created.body.id}`, { hmacSecret: `${SECRET}-2` });
    await server.admin('PATCH', `/api/admin/sources/${created.body.id}`, { hmacSecret: ` ${SECRET} ` });
    await server.admin('POST', `/api/admin/sources/${created.body.id}/rotate-key`);
    const log = JSON.stringify(server.logLines());
    expect(log).toContain(created.body.id);
    expect(log).not.toContain(key);
    expect(log).not.toContain(SECRET);
  });
});
