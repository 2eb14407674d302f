import { describe, expect, it } from 'vitest';
import { startLoggedTestServer } from '../support/logged-test-server.js';
import { post, seedSource } from '../support/seed-source.js';
import { TEST_ADMIN_TOKEN } from '../support/start-test-server.js';

describe('a client sending wrong source keys', () => {
  it('is logged as one line per client address with its count, not a line per request, and its valid keys are answered as ever', async () => {
    const server = await startLoggedTestServer({ trustProxy: ['127.0.0.1'] });
    let stopped = false;
    try {
      const { inboundPath } = await seedSource(server);
      const wrong = (address: string, i: number) =>
        post(`${server.url}/api/inbound/wrong-key-${i}`, 'EURUSD,buy', {
          'content-type': 'text/plain',
          'x-forwarded-for': address,
        });
      const answers = await Promise.all([
        ...Array.from({ length: 30 }, (_, i) => wrong('203.0.113.1', i)),
        ...Array.from({ length: 20 }, (_, i) => wrong('2001:db8::2', i)),
      ]);
      expect(answers.every((a) => a.status === 401 && a.body.code === 'INVALID_SOURCE_KEY')).toBe(true);
      // A valid key from the same address as a flood of wrong ones is not held up or refused.
      const valid = await post(`${server.url}${inboundPath}`, 'EURUSD,buy', {
        'content-type': 'text/plain',
        'x-forwarded-for': '203.0.113.1',
      });
      expect(valid.status).toBe(202);
      // Counted for monitoring too, at once (the log line waits for its minute).
      const metrics = await (
        await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })
      ).text();
      expect(metrics).toMatch(/^signalgate_inbound_wrong_keys_total 50$/m);

      await server.stop();
      stopped = true;
      const lines = server.logLines();
      const inboundAccess = lines.filter((l) => l.msg === 'request' && String(l.url).startsWith('/api/inbound/'));
      expect(inboundAccess).toEqual([
        expect.objectContaining({ statusCode: 202, clientAddress: '203.0.113.1', signalId: valid.body.id }),
      ]);
      const counted = lines.filter(
        (l) => typeof l.msg === 'string' && l.msg.includes('with a source key no source has'),
      );
      expect(counted).toEqual([
        expect.objectContaining({
          level: 40,
          clientAddress: '203.0.113.1',
          count: 30,
          statusCode: 401,
          msg: '30 inbound requests with a source key no source has',
        }),
        expect.objectContaining({ level: 40, clientAddress: '2001:db8::2', count: 20, statusCode: 401 }),
      ]);
      expect(JSON.stringify(counted)).not.toContain('wrong-key');
    } finally {
      if (!stopped) await server.stop();
    }
  });
});
