import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WebSocket } from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { adminRequest } from '../support/admin-client.js';
import { freshPostgresSchema } from '../support/postgres.js';
import { spawnServer, type ServerProcess } from '../support/spawn-server.js';
import { TEST_ADMIN_TOKEN, TEST_METRICS_TOKEN } from '../support/test-tokens.js';

const ADMIN = TEST_ADMIN_TOKEN;
const METRICS = TEST_METRICS_TOKEN;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `signalgate serve` as a process on a fresh store of the kind under test, with a metrics token. */
async function start(): Promise<ServerProcess> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'signalgate-metrics-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const env: Record<string, string> = {
    SIGNALGATE_DATA_DIR: dataDir,
    SIGNALGATE_ADMIN_TOKEN: ADMIN,
    SIGNALGATE_METRICS_TOKEN: METRICS,
  };
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
    const attempts: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer wrong-token' },
      { authorization: `Basic ${ADMIN}` },
    ];
    for (const headers of attempts) {
      const res = await fetch(`${server.url}/metrics`, { headers });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: 'UNAUTHORIZED', param: 'Authorization' });
    }
  });

  it('serves the inbound, delivery and agent metrics and the Node process metrics in Prometheus text', async () => {
    const server = await start();
    const account = await adminRequest(server.url, ADMIN, 'POST', '/api/admin/accounts', {
      name: 'Ops',
      monthlySignalQuota: 100,
    });
    const agent = await adminRequest(server.url, ADMIN, 'POST', `/api/admin/accounts/${account.body.id}/agents`, {
      name: 'paper',
    });
    const source = await adminRequest(server.url, ADMIN, 'POST', '/api/admin/sources', {
      accountId: account.body.id,
      name: 'alerts',
    });
    const post = (key: string, body: string) =>
      fetch(`${server.url}/api/inbound/${key}`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body,
      }).then((r) => r.status);
    for (let i = 0; i < 3; i++) expect(await post(source.body.authKey, `EURUSD,buy,vol=0.1,comment=m${i}`)).toBe(202);
    expect(await post(source.body.authKey, 'EURUSD,hold')).toBe(422);
    expect(await post('no-such-key-at-all-0000000000', 'EURUSD,buy')).toBe(401);
    const agentAuth = { authorization: `Bearer ${agent.body.token}` };
    const polled = (await (await fetch(`${server.url}/api/agent/signals?wait=0`, { headers: agentAuth })).json()) as {
      signals: Array<{ id: string }>;
    };
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
      expect(sample(text, 'signalgate_inbound_wrong_keys_total')).toBe(1);
      expect(text).toContain('# TYPE signalgate_inbound_duration_seconds histogram');
      expect(sample(text, 'signalgate_inbound_duration_seconds_count')).toBe(5);
      expect(sample(text, 'signalgate_inbound_duration_seconds_bucket{le="+Inf"}')).toBe(5);
      // Cumulative buckets, whatever the durations were (how fast they were is for benchmarks).
      const buckets = [...text.matchAll(/^signalgate_inbound_duration_seconds_bucket\{le="([^"]+)"\} (\d+)$/gm)].map(
        (m) => Number(m[2]),
      );
      expect(buckets.length).toBeGreaterThan(1);
      expect(buckets).toEqual([...buckets].sort((a, b) => a - b));
      expect(sample(text, 'signalgate_inbound_duration_seconds_sum')).toBeGreaterThan(0);
      expect(sample(text, 'signalgate_deliveries_total{status="delivered"}')).toBe(3);
      expect(sample(text, 'signalgate_deliveries_total{status="executed"}')).toBe(1);
      expect(sample(text, `signalgate_agent_queue_depth{agent="${agent.body.id}"}`)).toBe(2);
      expect(sample(text, 'signalgate_agents_connected')).toBe(1);
      expect(text).toContain('# TYPE process_cpu_user_seconds_total counter');
      expect(text).toContain('# TYPE nodejs_heap_size_used_bytes gauge');
      // Neither token nor key ever shows.
      for (const secret of [ADMIN, METRICS, agent.body.token as string, source.body.authKey as string])
        expect(text).not.toContain(secret);
    }
  });

  it('counts a WebSocket session as a connected agent, and its pushes as delivered, until it closes', async () => {
    const server = await start();
    const account = await adminRequest(server.url, ADMIN, 'POST', '/api/admin/accounts', {
      name: 'Ops',
      monthlySignalQuota: 100,
    });
    const agent = await adminRequest(server.url, ADMIN, 'POST', `/api/admin/accounts/${account.body.id}/agents`, {
      name: 'ws',
    });
    const source = await adminRequest(server.url, ADMIN, 'POST', '/api/admin/sources', {
      accountId: account.body.id,
      name: 'alerts',
    });
    const scrape = async () =>
      (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS}` } })).text();
    expect(sample(await scrape(), 'signalgate_agents_connected')).toBe(0);

    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/api/agent/ws`, {
      headers: { authorization: `Bearer ${agent.body.token}` },
    });
    const pushed: string[] = [];
    ws.on('message', (data) => {
      const message = JSON.parse(data.toString()) as { type: string; signals?: Array<{ id: string }> };
      if (message.type === 'signals') pushed.push(...message.signals!.map((s) => s.id));
    });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    try {
      for (let i = 0; i < 2; i++) {
        const res = await fetch(`${server.url}/api/inbound/${source.body.authKey}`, {
          method: 'POST',
          headers: { 'content-type': 'text/plain' },
          body: `EURUSD,buy,vol=0.1,comment=ws${i}`,
        });
        expect(res.status).toBe(202);
      }
      for (const deadline = Date.now() + 20_000; new Set(pushed).size < 2 && Date.now() < deadline;)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(new Set(pushed).size).toBe(2);
      const text = await scrape();
      expect(sample(text, 'signalgate_agents_connected')).toBe(1);
      // Each hand-out counts, a repeated one too: as the deliveries' own attempts count them.
      let attempts = 0;
      for (const id of new Set(pushed)) {
        const record = await adminRequest(server.url, ADMIN, 'GET', `/api/admin/signals/${id}`);
        attempts += (record.body.deliveries as Array<{ attempts: number }>)[0]!.attempts;
      }
      expect(attempts).toBeGreaterThanOrEqual(2);
      expect(sample(text, 'signalgate_deliveries_total{status="delivered"}')).toBe(attempts);
      expect(sample(text, `signalgate_agent_queue_depth{agent="${agent.body.id}"}`)).toBe(2);
    } finally {
      ws.close();
    }
    await new Promise((resolve) => ws.once('close', resolve));
    let connected: number | undefined;
    for (const deadline = Date.now() + 20_000; Date.now() < deadline;) {
      connected = sample(await scrape(), 'signalgate_agents_connected');
      if (connected === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(connected).toBe(0);
  });
});
