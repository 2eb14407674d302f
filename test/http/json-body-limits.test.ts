import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithAgents, type TestAgent } from '../delivery/support/delivery-setup.js';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/start-test-server.js';

/** A request with a body given as raw bytes, so it can hold what JSON.stringify never makes. */
async function rawJson(url: string, token: string, method: string, body: Buffer | string) {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** A snapshot whose `positions` holds lists within lists, `depth` levels in all (the snapshot is level 1). */
function snapshotNested(depth: number): string {
  const lists = depth - 1;
  return `{"balance":1,"equity":1,"currency":"USD","orders":[],"positions":${'['.repeat(lists)}${']'.repeat(lists)}}`;
}

describe('JSON bodies the admin and agent APIs refuse', () => {
  let server: TestServer;
  let agent: TestAgent;
  let accountId: string;

  beforeAll(async () => {
    server = await startTestServer();
    const made = await accountWithAgents(server, ['mt5']);
    agent = made.agents[0]!;
    accountId = made.accountId;
  });
  afterAll(() => server.stop());

  it('PUT /api/agent/state nested thousands deep: 400 naming the limit, not 500, and the stored snapshot is kept', async () => {
    const state = `${server.url}/api/agent/state`;
    expect((await rawJson(state, agent.token, 'PUT', snapshotNested(64))).status).toBe(200);
    for (const depth of [65, 4_200, 30_000]) {
      const res = await rawJson(state, agent.token, 'PUT', snapshotNested(depth));
      expect(res.status, `depth ${depth}`).toBe(400);
      expect(res.body).toMatchObject({
        code: 'INVALID_REQUEST',
        detail: expect.stringContaining('nested more than 64 levels deep'),
      });
    }
    const view = await server.admin('GET', `/api/admin/agents/${agent.id}`);
    expect(JSON.stringify(view.body.state.positions)).toBe('['.repeat(63) + ']'.repeat(63));
  });

  it('invalid UTF-8 in an admin body: 400, nothing stored (not U+FFFD)', async () => {
    const bytes = Buffer.concat([Buffer.from('{"name":"Desk '), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const res = await rawJson(`${server.url}/api/admin/accounts/${accountId}`, TEST_ADMIN_TOKEN, 'PATCH', bytes);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_REQUEST', detail: expect.stringContaining('not valid UTF-8') });
    const account = await server.admin('GET', `/api/admin/accounts/${accountId}`);
    expect(account.body.name).not.toContain('\uFFFD');

    const created = await rawJson(
      `${server.url}/api/admin/accounts`,
      TEST_ADMIN_TOKEN,
      'POST',
      Buffer.concat([Buffer.from('{"name":"A'), Buffer.from([0xc3]), Buffer.from('","monthlySignalQuota":5}')]),
    );
    expect(created).toMatchObject({ status: 400, body: { code: 'INVALID_REQUEST' } });
  });

  it('invalid UTF-8 in an agent body: 400, and the snapshot is not stored', async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"balance":1,"equity":1,"currency":"US'),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from('","positions":[],"orders":[]}'),
    ]);
    const res = await rawJson(`${server.url}/api/agent/state`, agent.token, 'PUT', bytes);
    expect(res.status).toBe(400);
    expect(res.body.detail).toContain('not valid UTF-8');
    const view = await server.admin('GET', `/api/admin/agents/${agent.id}`);
    expect(view.body.state.currency).toBe('USD');
  });

  it('valid UTF-8 beyond ASCII is kept as sent', async () => {
    const res = await rawJson(
      `${server.url}/api/admin/accounts/${accountId}`,
      TEST_ADMIN_TOKEN,
      'PATCH',
      Buffer.from('{"name":"Bürö € 📈"}', 'utf8'),
    );
    expect(res.status).toBe(200);
    expect((await server.admin('GET', `/api/admin/accounts/${accountId}`)).body.name).toBe('Bürö € 📈');
  });

  it('an admin body nested too deep, holding too many values, or over 64 KiB: refused before it is read, naming the field, nothing changed', async () => {
    const url = `${server.url}/api/admin/accounts/${accountId}`;
    const before = (await server.admin('GET', `/api/admin/accounts/${accountId}`)).body;
    const deep = await rawJson(
      url,
      TEST_ADMIN_TOKEN,
      'PATCH',
      `{"name":"Deep","extra":${'['.repeat(5_000)}${']'.repeat(5_000)}}`,
    );
    expect(deep).toMatchObject({
      status: 400,
      body: {
        code: 'INVALID_REQUEST',
        param: 'extra',
        detail: expect.stringContaining('nested more than 64 levels deep'),
      },
    });
    const many = await rawJson(url, TEST_ADMIN_TOKEN, 'PATCH', `{"name":"Many","extra":[${'1,'.repeat(20_000)}1]}`);
    expect(many).toMatchObject({
      status: 413,
      body: { code: 'PAYLOAD_TOO_LARGE', param: 'extra', detail: expect.stringContaining('more than 10000 values') },
    });
    const list = await rawJson(url, TEST_ADMIN_TOKEN, 'PATCH', `[${'0,'.repeat(10_000)}0]`);
    expect(list).toMatchObject({
      status: 413,
      body: { code: 'PAYLOAD_TOO_LARGE', detail: expect.stringContaining('more than 10000 values') },
    });
    const large = await rawJson(url, TEST_ADMIN_TOKEN, 'PATCH', JSON.stringify({ name: 'x'.repeat(70_000) }));
    expect(large).toMatchObject({
      status: 413,
      body: { code: 'PAYLOAD_TOO_LARGE', detail: expect.stringContaining('65536 bytes') },
    });
    expect((await server.admin('GET', `/api/admin/accounts/${accountId}`)).body).toEqual(before);
  });

  it('an ack whose result nests too deep: 400 naming result, and the signal stays unacknowledged', async () => {
    const res = await rawJson(
      `${server.url}/api/agent/signals/sig_none/ack`,
      agent.token,
      'POST',
      `{"status":"executed","result":${'{"a":'.repeat(100)}1${'}'.repeat(100)}}`,
    );
    expect(res).toMatchObject({ status: 400, body: { code: 'INVALID_REQUEST', param: 'result' } });
  });
});
