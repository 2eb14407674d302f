import type { IncomingMessage, ServerResponse } from 'node:http';
import { hexHmacMatches, serveProxied, type Send } from './proxied-exchange-http.js';

/**
 * How the Binance test exchanges (spot and USDⓈ-M) take a request, as Binance documents it for
 * both: its parameters, the check of a SIGNED one, the error answer, and the failures a test
 * asks for. What each market answers stays in its own file.
 */

/** A request as received: method, the exchange's path, its parameters. */
export interface BinanceRequest {
  method: string;
  path: string;
  params: Record<string, string>;
  at: number;
}

export type BinanceMoment = 'arrived' | 'carried' | 'answered';
export type BinanceMomentHook = (request: BinanceRequest, moment: BinanceMoment) => 'drop' | 'withhold' | void;

/** A refusal as Binance answers it: `{code, msg}` with the HTTP status. */
export class BinanceError extends Error {
  constructor(
    readonly code: number,
    msg: string,
    readonly status = 400,
  ) {
    super(msg);
  }
}

/** Requests to answer with an error instead (`/_control/fail`), `count` times more. */
export interface BinanceFailure {
  method: string;
  path: string;
  code: number;
  msg: string;
  count: number;
}

/** `serveProxied` with Binance's answer to a path that is not an exchange URL. */
export function serveBinance(
  req: IncomingMessage,
  res: ServerResponse,
  control: (method: string, url: URL) => unknown,
  answer: (req: IncomingMessage, res: ServerResponse, url: URL, body: string, send: Send) => void,
): void {
  serveProxied(req, res, {
    control,
    notExchange: (message) => ({ code: -1000, msg: message }),
    exchange: (url, body, send) => answer(req, res, url, body, send),
  });
}

/** The state of a Binance test exchange that every request passes through on arrival. */
export interface BinanceArrivals {
  /** The test's hook at the moments a request passes (see each exchange's `onMoment`). */
  moments: BinanceMomentHook | null;
  /** Requests the hook dropped on arrival: never carried out, as if they never left the agent. */
  dropped: BinanceRequest[];
  /** Every request, in the order received (control requests excluded). */
  received: BinanceRequest[];
  /** Requests to answer with an error instead (`/_control/fail`). */
  failures: BinanceFailure[];
}

/**
 * A request's arrival: read with its parameters (the query's, then the form body's), shown to the
 * test's hook (`drop`: its connection destroyed, kept in `dropped`), kept in `received`, and
 * refused with a failure a test asked for when one is due. The request to carry out, or null
 * when it was dealt with here.
 */
export function arrive(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  body: string,
  send: Send,
  exchange: BinanceArrivals,
): BinanceRequest | null {
  const params = Object.fromEntries(new URLSearchParams(url.search.slice(1)));
  if (body) Object.assign(params, Object.fromEntries(new URLSearchParams(body)));
  const request: BinanceRequest = { method: req.method ?? 'GET', path: url.pathname, params, at: Date.now() };
  if (exchange.moments?.(request, 'arrived') === 'drop') {
    exchange.dropped.push(request);
    res.destroy();
    return null;
  }
  exchange.received.push(request);
  const failure = exchange.failures.find((f) => f.count > 0 && f.method === request.method && f.path === request.path);
  if (!failure) return request;
  failure.count -= 1;
  send(400, { code: failure.code, msg: failure.msg });
  return null;
}

/**
 * A SIGNED request's check: the API key (X-MBX-APIKEY), the hex HMAC SHA256 of the query and body
 * without the signature, the timestamp within recvWindow (-2014, -2015, -1102, -1022, -1021).
 */
export function checkSigned(
  request: BinanceRequest,
  apiKey: string | string[] | undefined,
  keys: { apiKey: string; secret: string },
  url: URL,
  body: string,
): void {
  if (apiKey === undefined) throw new BinanceError(-2014, 'API-key format invalid.', 401);
  if (apiKey !== keys.apiKey) throw new BinanceError(-2015, 'Invalid API-key, IP, or permissions for action.', 401);
  const signature = request.params.signature;
  if (signature === undefined)
    throw new BinanceError(-1102, "Mandatory parameter 'signature' was not sent, was empty/null, or malformed.");
  const strip = (text: string) => text.replace(/(^|&)signature=[^&]*/, '').replace(/^&/, '');
  if (!hexHmacMatches(keys.secret, strip(url.search.slice(1)) + strip(body), signature))
    throw new BinanceError(-1022, 'Signature for this request is not valid.');
  const timestamp = Number(request.params.timestamp);
  const recvWindow = Number(request.params.recvWindow ?? 5000);
  const now = Date.now();
  if (!Number.isFinite(timestamp) || timestamp > now + 1000 || now - timestamp > recvWindow)
    throw new BinanceError(-1021, 'Timestamp for this request is outside of the recvWindow.');
}

/** What `carryOut` answers with status 200, or the BinanceError it throws as Binance answers it. */
export function binanceAnswer(carryOut: () => unknown): { status: number; payload: unknown } {
  try {
    return { status: 200, payload: carryOut() };
  } catch (error) {
    if (!(error instanceof BinanceError)) throw error;
    return { status: error.status, payload: { code: error.code, msg: error.message } };
  }
}
