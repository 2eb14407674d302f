import { createHmac } from 'node:crypto';

export interface BenchRequest {
  method: 'POST';
  path: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * A realistic mix: TradingView-style text alerts and JSON from bots and backends, a third of
 * them signed with HMAC. The same mix is sent to every server under test.
 */
export function signalMix(plainKey: string, signedKey: string, secret: string): BenchRequest[] {
  const text = (key: string, body: string): BenchRequest => ({
    method: 'POST',
    path: `/api/inbound/${key}`,
    headers: { 'content-type': 'text/plain' },
    body,
  });
  const json = (key: string, value: unknown): BenchRequest => ({
    method: 'POST',
    path: `/api/inbound/${key}`,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(value),
  });
  const signed = (request: BenchRequest): BenchRequest => ({
    ...request,
    headers: {
      ...request.headers,
      'x-signature': `sha256=${createHmac('sha256', secret).update(request.body).digest('hex')}`,
    },
  });
  return [
    text(plainKey, 'EURUSD,buy,vol_pctbal_loss=1,sl_pips=20,tp1_pips=20,tp2_pips=40'),
    json(plainKey, {
      symbol: 'GBPUSD',
      action: 'sell',
      vol: 0.2,
      sl_pips: 25,
      tp_pips: 50,
      comment: 'london-breakout',
    }),
    signed(text(signedKey, 'XAUUSD,buylimit,vol=0.1,entry_pips=50,sl_pips=100,tp_pips=300,comment="gold, dip"')),
    text(plainKey, 'USDJPY,closebuy,pct=50'),
    json(plainKey, {
      symbol: 'eurusd',
      action: 'BUY',
      volume: 0.1,
      volumeType: 'lots',
      sl: 20,
      slType: 'pips',
      tp: 40,
      tpType: 'pips',
    }),
    signed(
      json(signedKey, {
        symbol: 'BTCUSD',
        action: 'long',
        vol_pcteq: 2,
        trail_trigger: 100,
        trail_distance: 50,
        be_trigger: 80,
      }),
    ),
  ];
}
