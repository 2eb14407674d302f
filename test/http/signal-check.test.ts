import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedSource } from '../support/seed-source.js';
import { startTestServer, type TestServer } from '../support/start-test-server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

/** Bodies the checker and the inbound endpoint must judge alike, each with the Content-Type sent. */
const CASES: Array<{ body: string; contentType?: string }> = [
  { body: 'EURUSD,buy,vol=0.1,sl_pips=20,tp1_pips=20,tp2_pips=40' },
  { body: 'EURUSD,buy,vol=0.1,sl_pip=20' },
  { body: 'EURUSD,buy,vol_dollar=50' },
  { body: 'EURUSD,buy,vol=0.1,vol=0.2,tp1=10,tp3=30' },
  { body: 'EURUSD,bye' },
  { body: '  {"symbol":"XAUUSD","action":"sell","vol":0.01,"sl_price":2400}' },
  { body: '{"symbol":"EURUSD","action":"buy","vol":0.1,"vol":0.2}', contentType: 'application/json' },
  { body: '{"symbol":"EURUSD",', contentType: 'application/json' },
  { body: 'EURUSD,buy', contentType: 'application/json' },
  { body: '{"symbol":"EURUSD","action":"buy"}', contentType: 'text/plain' },
  { body: 'EURUSD,buy', contentType: 'text/csv' },
  { body: 'EURUSD,buy', contentType: 'text/plain; charset=latin1' },
  { body: '' },
];

describe('the signal checker', () => {
  it('judges every body as the inbound endpoint does: the same normalized signal or the same problems', async () => {
    const source = await seedSource(server);
    for (const { body, contentType } of CASES) {
      const check = await server.admin('POST', '/api/admin/check', {
        body,
        ...(contentType !== undefined && { contentType }),
      });
      expect(check.status, body).toBe(200);
      const inbound = await fetch(`${server.url}${source.inboundPath}`, {
        method: 'POST',
        // Bytes, not a string: fetch would send a string as text/plain.
        body: new TextEncoder().encode(body),
        headers: contentType === undefined ? {} : { 'content-type': contentType },
      });
      const answer = (await inbound.json()) as any;
      if (inbound.status === 202) {
        expect(check.body, body).toEqual({ valid: true, format: expect.any(String), signal: answer.signal });
      } else {
        expect(check.body, body).toEqual({
          valid: false,
          httpStatus: inbound.status,
          code: answer.code,
          errors: answer.errors ?? [
            { code: answer.code, detail: answer.detail, ...(answer.param !== undefined && { param: answer.param }) },
          ],
        });
      }
    }
  });

  it('checks a TradingView alert message with placeholders with sample values, saying what each becomes and warning of the ones that can make it wrong', async () => {
    // The dashboard's strategy message: checked as each position the strategy can hold.
    const strategy = await server.admin('POST', '/api/admin/check', {
      body: '{{ticker}},position{{strategy.market_position}},vol_pctbal_loss=1,sl_pips=20,tp_pips=40',
    });
    expect(strategy.status).toBe(200);
    expect(strategy.body).toMatchObject({
      valid: true,
      format: 'text',
      signal: { symbol: 'BTCUSDT', action: 'positionlong' },
    });
    expect(
      strategy.body.template.placeholders.map((p: { written: string; becomes: string }) => [p.written, p.becomes]),
    ).toEqual([
      ['{{ticker}}', 'BTCUSDT'],
      ['{{strategy.market_position}}', 'long'],
    ]);
    expect(strategy.body.template.warnings).toEqual([]);
    expect(strategy.body.template.checked.map((c: { body: string; valid: boolean }) => [c.body, c.valid])).toEqual([
      ['BTCUSDT,positionlong,vol_pctbal_loss=1,sl_pips=20,tp_pips=40', true],
      ['BTCUSDT,positionshort,vol_pctbal_loss=1,sl_pips=20,tp_pips=40', true],
      ['BTCUSDT,positionflat,vol_pctbal_loss=1,sl_pips=20,tp_pips=40', true],
    ]);

    // The old message: not a "malformed JSON" refusal, but valid with a warning about exits.
    const orderAction = await server.admin('POST', '/api/admin/check', {
      body: '{{ticker}},{{strategy.order.action}},vol_pctbal_loss=1,sl_pips=20,tp_pips=40',
    });
    expect(orderAction.body).toMatchObject({ valid: true, signal: { symbol: 'BTCUSDT', action: 'buy' } });
    expect(orderAction.body.template.warnings).toEqual([
      expect.stringMatching(
        /^\{\{strategy\.order\.action\}\} is buy or sell for every order of a strategy, its exits too/,
      ),
    ]);

    // A size that is 0 when flat: refused as the flat message would be.
    const size = await server.admin('POST', '/api/admin/check', {
      body: '{{ticker}},position{{strategy.market_position}},vol={{strategy.market_position_size}}',
    });
    expect(size.body).toMatchObject({ valid: false, httpStatus: 422, code: 'INVALID_VOLUME' });
    expect(size.body.template.checked.map((c: { body: string; valid: boolean }) => [c.body, c.valid])).toEqual([
      ['BTCUSDT,positionlong,vol=1', true],
      ['BTCUSDT,positionshort,vol=1', true],
      ['BTCUSDT,positionflat,vol=0', false],
    ]);

    // A JSON template, and the action placeholder used alone.
    const json = await server.admin('POST', '/api/admin/check', {
      body: '{"symbol":"{{ticker}}","action":"{{strategy.market_position}}","vol":1}',
    });
    expect(json.body).toMatchObject({ valid: false, code: 'UNKNOWN_ACTION' });
    expect(json.body.template.warnings).toEqual([
      expect.stringMatching(/^\{\{strategy\.market_position\}\} alone becomes long, short or flat/),
    ]);
    // Without placeholders the answer is as before: no template.
    expect((await server.admin('POST', '/api/admin/check', { body: 'EURUSD,buy' })).body.template).toBeUndefined();
  });

  it('stores nothing and sends nothing', async () => {
    const source = await seedSource(server);
    const before = (await server.admin('GET', '/api/admin/signals?limit=500')).body.signals.length;
    const check = await server.admin('POST', '/api/admin/check', { body: 'EURUSD,buy,vol=0.1' });
    expect(check.body.valid).toBe(true);
    expect((await server.admin('GET', '/api/admin/signals?limit=500')).body.signals.length).toBe(before);
    expect((await server.admin('GET', `/api/admin/signals?sourceId=${source.sourceId}`)).body.signals).toEqual([]);
  });

  it('refuses a request without a body string, or with fields it does not take', async () => {
    expect((await server.admin('POST', '/api/admin/check', {})).body).toMatchObject({
      code: 'INVALID_FIELD',
      param: 'body',
    });
    expect((await server.admin('POST', '/api/admin/check', { body: 5 })).body).toMatchObject({
      code: 'INVALID_FIELD',
      param: 'body',
    });
    const typo = await server.admin('POST', '/api/admin/check', { body: 'EURUSD,buy', contentTyp: 'text/plain' });
    expect(typo.status).toBe(422);
    expect(typo.body).toMatchObject({ param: 'contentTyp' });
  });
});
