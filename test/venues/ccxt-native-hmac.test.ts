import { createHmac } from 'node:crypto';
import ccxt, { type Exchange } from 'ccxt';
import { describe, expect, it } from 'vitest';
import { useNativeHmac } from '../../src/agent/venues/ccxt/ccxt-native-hmac.js';

type Hmac = (request: unknown, secret: unknown, hash: unknown, digest?: string) => unknown;

/** Binance USDⓈ-M signing a request, CCXT's own way: the hash function it hands to `hmac`, and CCXT's answer. */
function signedByCcxt(): { exchange: Exchange; hashes: unknown[]; own: Hmac } {
  const exchange = new ccxt.binanceusdm({ apiKey: 'key', secret: 'secret' });
  const hashes: unknown[] = [];
  const own = exchange.hmac as unknown as Hmac;
  exchange.hmac = ((request: unknown, secret: unknown, hash: unknown, digest?: string) => {
    hashes.push(hash);
    return own(request, secret, hash, digest);
  }) as Exchange['hmac'];
  exchange.sign('order', 'fapiPrivate', 'POST', { symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.1' });
  return { exchange, hashes, own };
}

describe("CCXT's request signing through node:crypto", () => {
  it("signs SHA-256 requests with node:crypto, to the same bytes as CCXT's own HMAC, in every digest", () => {
    const { exchange, hashes, own } = signedByCcxt();
    const sha256 = hashes[0];
    expect(hashes).toHaveLength(1);
    let ownCalls = 0;
    exchange.hmac = ((...args: Parameters<Hmac>) => {
      ownCalls += 1;
      return own(...args);
    }) as Exchange['hmac'];
    useNativeHmac(exchange);
    const native = exchange.hmac as unknown as Hmac;
    const query = 'symbol=BTCUSDT&side=BUY&type=MARKET&quantity=0.1&timestamp=1700000000000';
    for (const [request, secret] of [
      [query, 'secret'],
      [exchange.encode(query), exchange.encode('sécret')],
    ] as const) {
      for (const digest of ['hex', 'base64', 'binary']) {
        expect(native(request, secret, sha256, digest)).toEqual(own(request, secret, sha256, digest));
      }
    }
    expect(native(query, 'secret', sha256)).toBe(createHmac('sha256', 'secret').update(query).digest('hex'));
    // None of it went to CCXT's JavaScript HMAC.
    expect(ownCalls).toBe(0);
  });

  it("leaves other hashes and digests to CCXT's own HMAC", () => {
    const { exchange, hashes } = signedByCcxt();
    const calls: unknown[][] = [];
    exchange.hmac = ((...args: unknown[]) => {
      calls.push(args);
      return 'ccxt';
    }) as Exchange['hmac'];
    useNativeHmac(exchange);
    const native = exchange.hmac as unknown as Hmac;
    const notSha2 = { oid: new Uint8Array([0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02, 0x1a]), outputLen: 20 };
    expect(native('a', 'b', notSha2, 'hex')).toBe('ccxt');
    expect(native('a', 'b', hashes[0], 'base58')).toBe('ccxt');
    expect(native('a', 'b', () => new Uint8Array(32), 'hex')).toBe('ccxt');
    expect(calls).toHaveLength(3);
  });
});
