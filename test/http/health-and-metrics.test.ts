import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { adminRequest } from '../support/admin-client.js';
import { freshPostgresSchema } from '../support/postgres.js';
import { spawnServer, type ServerProcess } from '../support/spawn-server.js';

const ADMIN = 'health-metrics-admin-token-0123';
const METRICS = 'metrics-only-token-4567';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `signalgate serve` as a process on a fresh store of the kind under test, with a metrics token. */
async function start(): Promise<ServerProcess> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'signalgate-metrics-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const env: Record<string, string> = { SIGNALGATE_DATA_DIR: dataDir, SIGNALGATE_ADMIN_TOKEN: ADMIN, SIGNALGATE_METRICS_TOKEN: METRICS };
  if (process.env.SIGNALGATE_TEST_STORE === 'postgres') {
    const pg = await freshPostgresSchema('metrics');
    cleanups.push(() => pg.drop());
    env.SIGNALGATE_DATABASE_URL = pg.urlWithSchema;
  }
  const server = await spawnServer(env);
  cleanups.push(async () => {
    server.child.kill('SIGKILL');
    await server.exited;
  });
  return server;
}

/** One sample's value from Prometheus text, e.g. `signalgate_inbound_requests_total{code="202"}`; undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('health, readiness and metrics', () => {
  it('answers /healthz and /readyz without a token and without secrets', async () => {
    const server = await start();
    const store = process.env.SIGNALGATE_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok', store });
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', store });
  });

  it('refuses /metrics without the admin or metrics token', async () => {
    const server = await start();
    const attempts: Array<Record<string, string>> = [{}, { authorization: 'Bearer wrong-token' }, { authorization: `Basic ${ADMIN}` }];
    for (const headers of attempts) {
      const res = await fetch(`${server.url}/metrics`, { headers });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: 'UNAUTHORIZED', param: 'Authorization' });
    }
  });

  it('serves the inbound, delivery and agent metrics and the Node process metrics in Prometheus text', async () => {
    const server = await start();
    const account = await adminRequest(server.url, ADMIN, 'POST', '/api/admin/accounts', { name: 'Ops', monthlySignalQuota: 100 });
    const agent = await adminRequest(server.url, ADMIN, 'POST', `/api/admin/accounts/${account.body.id}/agents`, { name: 'paper' });
    const source = await adminRequest(server.url, ADMIN, 'POST', '/api/admin/sources', { accountId: account.body.id, name: 'alerts' });
    const post = (key: string, body: string) =>
      fetch(`${server.url}/api/inbound/${key}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body }).then((r) => r.status);
    for (let i = 0; i < 3; i++) expect(await post(source.body.authKey, `EURUSD,buy,vol=0.1,comment=m${i}`)).toBe(202);
    expect(await post(source.body.authKey, 'EURUSD,hold')).toBe(422);
    expect(await post('no-such-key-at-all-0000000000', 'EURUSD,buy')).toBe(401);
    const agentAuth = { authorization: `Bearer ${agent.body.token}` };
    const polled = (await (await fetch(`${server.url}/api/agent/signals?wait=0`, { headers: agentAuth })).json()) as { signals: Array<{ id: string }> };
    expect(polled.signals).toHaveLength(3);
    const acked = await fetch(`${server.url}/api/agent/signals/${polled.signals[0]!.id}/ack`, {
      method: 'POST',
      headers: { ...agentAuth, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'executed' }),
    });
    expect(acked.status).toBe(200);

    for (const token of [ADMIN, METRICS]) {
      const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      const text = await res.text();
      expect(sample(text, 'signalgate_inbound_requests_total{code="202"}')).toBe(3);
      expect(sample(text, 'signalgate_inbound_requests_total{code="422"}')).toBe(1);
      expect(sample(text, 'signalgate_inbound_requests_total{code="401"}')).toBe(1);
      expect(text).toContain('# TYPE signalgate_inbound_duration_seconds histogram');
      expect(sample(text, 'signalgate_inbound_duration_seconds_count')).toBe(5);
      expect(sample(text, 'signalgate_inbound_duration_seconds_bucket{le="+Inf"}')).toBe(5);
      expect(sample(text, 'signalgate_inbound_duration_seconds_bucket{le="5"}')).toBe(5);
      expect(sample(text, 'signalgate_inbound_duration_seconds_sum')).toBeGreaterThan(0);
      expect(sample(text, 'signalgate_deliveries_total{status="delivered"}')).toBe(3);
      expect(sample(text, 'signalgate_deliveries_total{status="executed"}')).toBe(1);
      expect(sample(text, `signalgate_agent_queue_depth{agent="${agent.body.id}"}`)).toBe(2);
      expect(sample(text, 'signalgate_agents_connected')).toBe(1);
      expect(text).toContain('# TYPE process_cpu_user_seconds_total counter');
      expect(text).toContain('# TYPE nodejs_heap_size_used_bytes gauge');
      // Neither token nor key ever shows.
      for (const secret of [ADMIN, METRICS, agent.body.token as string, source.body.authKey as string]) expect(text).not.toContain(secret);
    }
  });
});
