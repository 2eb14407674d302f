import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { BybitV5Exchange } from '../fakes/bybit-v5-exchange.js';

const KEYS = { apiKey: 'bybit-stream-key', secret: 'bybit-stream-secret' };

/**
 * The Bybit test exchange's private stream itself (test/fakes/bybit-private-stream.ts), as a
 * client that is not CCXT sees it: Bybit's documented auth, subscription, ping and `order` pushes.
 */
describe("the Bybit test exchange's private stream", () => {
  let exchange: BybitV5Exchange;
  const sockets: WebSocket[] = [];
  beforeEach(async () => {
    exchange = await BybitV5Exchange.start(KEYS);
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.terminate();
    await exchange.stop();
  });

  /** A connection through the proxy, and the messages it receives in order. */
  const connect = async (path = 'wss://stream.bybit.com/v5/private') => {
    const socket = new WebSocket(`${exchange.url.replace(/^http/, 'ws')}${path}`);
    sockets.push(socket);
    const received: Record<string, any>[] = [];
    const waiting: (() => void)[] = [];
    socket.on('message', (data: Buffer) => {
      received.push(JSON.parse(data.toString()) as Record<string, any>);
      for (const wake of waiting.splice(0)) wake();
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    const next = async (): Promise<Record<string, any>> => {
      while (received.length === 0) await new Promise<void>((resolve) => waiting.push(resolve));
      return received.shift()!;
    };
    const ask = async (request: unknown) => {
      socket.send(JSON.stringify(request));
      return next();
    };
    return { socket, ask, next };
  };
  const auth = (expires = Date.now() + 10_000, secret = KEYS.secret, key = KEYS.apiKey) => ({
    op: 'auth',
    args: [key, String(expires), createHmac('sha256', secret).update(`GET/realtime${expires}`).digest('hex')],
  });

  it('authenticates a good signature and refuses a wrong one, a past expiry and another key', async () => {
    const bad = await connect();
    expect(await bad.ask(auth(undefined, 'another-secret'))).toMatchObject({
      success: false,
      ret_msg: 'Invalid sign',
      op: 'auth',
    });
    expect(await bad.ask(auth(Date.now() - 1000))).toMatchObject({ success: false, ret_msg: 'Params Error' });
    expect(await bad.ask(auth(undefined, KEYS.secret, 'another-key'))).toMatchObject({
      success: false,
      ret_msg: 'Invalid apikey',
    });
    // Unauthenticated, the order topic is refused.
    expect(await bad.ask({ op: 'subscribe', req_id: '7', args: ['order'] })).toMatchObject({
      success: false,
      ret_msg: 'Request not authorized',
      op: 'subscribe',
      req_id: '7',
    });
    const good = await connect();
    const answer = await good.ask(auth());
    expect(answer).toMatchObject({ success: true, ret_msg: '', op: 'auth' });
    expect(typeof answer.conn_id).toBe('string');
    expect(await good.ask(auth())).toMatchObject({ success: false, ret_msg: 'Repeat auth' });
  });

  it('answers a ping as on private channels, and pushes each state of an order on the order topic', async () => {
    const client = await connect();
    const pong = await client.ask({ req_id: '100001', op: 'ping' });
    expect(pong).toMatchObject({ req_id: '100001', op: 'pong', args: [expect.stringMatching(/^\d+$/)] });
    await client.ask(auth());
    expect(await client.ask({ op: 'subscribe', req_id: '1', args: ['order'] })).toMatchObject({
      success: true,
      op: 'subscribe',
      req_id: '1',
    });
    // A long with a conditional stop: the stop is pushed Untriggered, then Triggered and Filled in a dip.
    const sign = (query: string) => {
      const timestamp = String(Date.now());
      return {
        'X-BAPI-API-KEY': KEYS.apiKey,
        'X-BAPI-TIMESTAMP': timestamp,
        'X-BAPI-RECV-WINDOW': '5000',
        'X-BAPI-SIGN': createHmac('sha256', KEYS.secret)
          .update(timestamp + KEYS.apiKey + '5000' + query)
          .digest('hex'),
        'content-type': 'application/json',
      };
    };
    const create = async (order: Record<string, unknown>) => {
      const body = JSON.stringify({ category: 'linear', symbol: 'BTCUSDT', ...order });
      const res = await fetch(`${exchange.url}${encodeURIComponent('https://api.bybit.com/v5/order/create')}`, {
        method: 'POST',
        headers: sign(body),
        body,
      });
      return ((await res.json()) as { result: { orderId: string } }).result.orderId;
    };
    const entry = await create({ side: 'Buy', orderType: 'Market', qty: '0.01', orderLinkId: 'e1' });
    expect((await client.next()).data[0]).toMatchObject({ orderId: entry, orderStatus: 'New', category: 'linear' });
    expect((await client.next()).data[0]).toMatchObject({ orderId: entry, orderStatus: 'Filled', cumExecQty: '0.010' });
    const stop = await create({
      side: 'Sell',
      orderType: 'Market',
      qty: '0.01',
      triggerPrice: '49000',
      triggerDirection: 2,
      reduceOnly: true,
      orderLinkId: 's1',
    });
    const placed = await client.next();
    expect(placed).toMatchObject({ topic: 'order', data: [{ orderId: stop, orderStatus: 'Untriggered' }] });
    expect(typeof placed.id).toBe('string');
    expect(typeof placed.creationTime).toBe('number');
    exchange.setPrice('BTCUSDT', 48990);
    expect((await client.next()).data[0]).toMatchObject({ orderId: stop, orderStatus: 'Triggered' });
    expect((await client.next()).data[0]).toMatchObject({
      orderId: stop,
      orderLinkId: 's1',
      orderStatus: 'Filled',
      stopOrderType: 'Stop',
      triggerPrice: '49000.0',
      reduceOnly: true,
      cumExecQty: '0.010',
      avgPrice: '48990',
    });
  });

  it('refuses another path at the upgrade', async () => {
    await expect(connect('wss://stream.bybit.com/v5/public/linear')).rejects.toThrow(/404/);
  });
});
