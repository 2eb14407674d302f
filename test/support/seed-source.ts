import { createHmac } from 'node:crypto';
import type { TestServer } from './start-test-server.js';
import { unlessUnavailable } from './unless-unavailable.js';

export interface SeededSource {
  accountId: string;
  sourceId: string;
  authKey: string;
  inboundPath: string;
}

/** Creates an account and a source through the admin API, as an operator would. */
export async function seedSource(
  server: TestServer,
  opts: {
    quota?: number;
    hmacSecret?: string;
    agentIds?: string[];
    maxSignalAgeSeconds?: number;
    accountId?: string;
  } = {},
): Promise<SeededSource> {
  let accountId = opts.accountId;
  if (accountId === undefined) {
    const account = await unlessUnavailable(() =>
      server.admin('POST', '/api/admin/accounts', { name: 'Trader', monthlySignalQuota: opts.quota ?? 1000 }),
    );
    if (account.status !== 201) throw new Error(`account: ${account.status} ${JSON.stringify(account.body)}`);
    accountId = account.body.id as string;
  }
  const source = await unlessUnavailable(() =>
    server.admin('POST', '/api/admin/sources', {
      accountId,
      name: 'TradingView',
      ...(opts.hmacSecret !== undefined && { hmacSecret: opts.hmacSecret }),
      ...(opts.agentIds !== undefined && { agentIds: opts.agentIds }),
      ...(opts.maxSignalAgeSeconds !== undefined && { maxSignalAgeSeconds: opts.maxSignalAgeSeconds }),
    }),
  );
  if (source.status !== 201) throw new Error(`source: ${source.status} ${JSON.stringify(source.body)}`);
  return {
    accountId,
    sourceId: source.body.id,
    authKey: source.body.authKey,
    inboundPath: `/api/inbound/${source.body.authKey}`,
  };
}

export function sign(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export interface PostResult {
  status: number;
  headers: Headers;
  body: any;
}

/** POSTs a body to a path of the server, answering status, headers and the parsed JSON body. */
export async function post(
  url: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
): Promise<PostResult> {
  const res = await fetch(url, { method: 'POST', headers, body });
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  return { status: res.status, headers: res.headers, body: parsed };
}
