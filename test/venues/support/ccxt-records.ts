import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { CcxtVenue, type CcxtVenueOptions } from '../../../src/agent/venues/ccxt/ccxt-venue.js';

/**
 * CCXT's recorded exchange traffic (test/fixtures/ccxt, copied from the ccxt repository's
 * static tests) and a transport that captures what CCXT sends and answers from the records.
 */
const FIXTURES = path.join(import.meta.dirname, '..', '..', 'fixtures', 'ccxt');

export function fixture<T = any>(name: string): T {
  return JSON.parse(readFileSync(path.join(FIXTURES, name), 'utf8')) as T;
}

export interface SentRequest {
  url: string;
  method: string;
  body: string | undefined;
}

/** A record of one request: its description, its URL and what it sent (`output`), as in CCXT's request files. */
export interface RequestRecord {
  description: string;
  url: string;
  input: unknown[];
  output?: string | null;
}

export function requestRecord(
  file: string,
  method: string,
  description: string,
): { record: RequestRecord; skipKeys: string[]; outputType: string } {
  const data = fixture(file);
  const record = (data.methods[method] as RequestRecord[]).find((r) => r.description === description);
  if (!record) throw new Error(`no record "${description}" of ${method} in ${file}`);
  return { record, skipKeys: data.skipKeys ?? [], outputType: data.outputType };
}

export function responseRecord(file: string, method: string, description: string): unknown {
  const data = fixture(file);
  const record = (data.methods[method] as { description: string; httpResponse: unknown }[]).find(
    (r) => r.description === description,
  );
  if (!record) throw new Error(`no response record "${description}" of ${method} in ${file}`);
  return record.httpResponse;
}

/** A venue whose CCXT transport captures every request and answers with `answer` (a recorded response). */
export function recordedVenue(
  options: Partial<CcxtVenueOptions> & Pick<CcxtVenueOptions, 'exchange' | 'market'>,
  answer: (request: SentRequest) => unknown,
): { venue: CcxtVenue; sent: SentRequest[] } {
  const sent: SentRequest[] = [];
  const venue = new CcxtVenue({
    positionMode: 'oneway',
    sandbox: false,
    credentials: { apiKey: 'key', secret: 'secretsecret', password: 'password' },
    proxyUrl: null,
    // Recorded traffic moves the book between two calls: each quote is read, none held.
    quoteFreshMs: 0,
    ...options,
    transport: async (url, method, _headers, body) => {
      const request = { url, method, body };
      sent.push(request);
      return answer(request);
    },
  });
  return { venue, sent };
}

/** The parameters of a request: its JSON or url-encoded body, or its query when it has no body. */
export function paramsOf(url: string, body: string | undefined | null, outputType: string): Record<string, unknown> {
  if (body !== undefined && body !== null && body !== '') {
    if (outputType === 'json' || body.startsWith('{')) return JSON.parse(body) as Record<string, unknown>;
    return Object.fromEntries(new URLSearchParams(body));
  }
  return Object.fromEntries(new URL(url).searchParams);
}

/**
 * The request sent matches the recorded one: same path (hosts differ between the live, test and
 * demo networks), every recorded parameter with the same value except the skipped ones (time,
 * signature, CCXT's random broker ids), and nothing more except our client order id under
 * `clientIdKey`, whose value must be `clientId`.
 */
export function expectSameRequest(
  sent: SentRequest,
  recorded: { record: RequestRecord; skipKeys: string[]; outputType: string },
  client: { key: string; value: string } | null,
): void {
  const { record, skipKeys, outputType } = recorded;
  expect(new URL(sent.url).pathname, `path of "${record.description}"`).toBe(new URL(record.url).pathname);
  const want = paramsOf(record.url, record.output, outputType);
  const got = paramsOf(sent.url, sent.body, outputType);
  const skip = new Set([...skipKeys, ...(client ? [client.key] : [])]);
  const strip = (params: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(params)
        .filter(([key]) => !skip.has(key))
        .map(([k, v]) => [k, String(v)]),
    );
  expect(strip(got), `parameters of "${record.description}"`).toEqual(strip(want));
  if (client) expect(got[client.key], `client order id of "${record.description}"`).toBe(client.value);
}
