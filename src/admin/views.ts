import type { AgentEntry } from '../store/agent-entry.js';
import type { Account, Agent, Source } from '../store/records.js';
import { type JsonSchema, objectSchema } from '../openapi/index.js';

/** How records are shown by the admin API and the CLI (docs/admin-api.md). Secrets never appear. */

/**
 * A source as shown. The key is only known when it was just made (`authKey`, at creation and at
 * rotation): only then do `authKey` and `inboundUrl` appear. The store keeps its digest, so any
 * later view shows only `authKeyHint`, its first characters.
 */
export function sourceView(source: Source, publicUrl: string, authKey?: string) {
  return {
    id: source.id,
    accountId: source.accountId,
    name: source.name,
    authKeyHint: source.authKeyHint,
    ...(authKey !== undefined && { authKey, inboundUrl: `${publicUrl}/api/inbound/${authKey}` }),
    active: source.active,
    hmac: source.hmacSecret !== null,
    agentIds: source.agentIds,
    maxSignalAgeSeconds: source.maxSignalAgeSeconds,
    duplicateWindowSeconds: source.duplicateWindowSeconds,
    allowedIps: source.allowedIps,
    createdAt: source.createdAt,
  };
}

export function accountView(account: Account) {
  return {
    id: account.id,
    name: account.name,
    monthlySignalQuota: account.monthlySignalQuota,
    createdAt: account.createdAt,
  };
}

export function agentView(agent: Omit<Agent, 'tokenHash'>) {
  return {
    id: agent.id,
    name: agent.name,
    accountId: agent.accountId,
    createdAt: agent.createdAt,
    lastSeenAt: agent.lastSeenAt,
    state: agent.state ?? null,
  };
}

const json = JSON.stringify;

/**
 * `JSON.stringify(agentView(agentOfEntry(entry)))`, byte for byte (the same keys in the same
 * order), without parsing the state: it is written as stored, which is `JSON.stringify`'s text.
 */
export function agentEntryJson(entry: AgentEntry): string {
  return (
    `{"id":${json(entry.id)},"name":${json(entry.name)},"accountId":${json(entry.accountId)},"createdAt":${json(entry.createdAt)},` +
    `"lastSeenAt":${json(entry.lastSeenAt)},"state":${entry.stateJson ?? 'null'}}`
  );
}

/** The schemas of the views above, for the API description. */
const TIME: JsonSchema = { type: 'string', format: 'date-time' };
export const ACCOUNT_VIEW = objectSchema(
  { id: { type: 'string' }, name: { type: 'string' }, monthlySignalQuota: { type: 'integer' }, createdAt: TIME },
  ['id', 'name', 'monthlySignalQuota', 'createdAt'],
);
export const SOURCE_VIEW = objectSchema(
  {
    id: { type: 'string' },
    accountId: { type: 'string' },
    name: { type: 'string' },
    authKeyHint: {
      type: 'string',
      description: "the key's first 4 characters, to tell keys apart (not enough to send with)",
    },
    authKey: {
      type: 'string',
      description:
        'the secret part of the inbound URL: only in the answers that create the source or rotate its key, never again',
    },
    inboundUrl: {
      type: 'string',
      description: 'where to send signals: only in the answers that create the source or rotate its key, never again',
    },
    active: { type: 'boolean' },
    hmac: { type: 'boolean', description: 'whether a secret is set (the secret is never shown)' },
    agentIds: { type: 'array', items: { type: 'string' } },
    maxSignalAgeSeconds: { type: 'integer' },
    allowedIps: { type: 'array', items: { type: 'string' } },
    createdAt: TIME,
  },
  [
    'id',
    'accountId',
    'name',
    'authKeyHint',
    'active',
    'hmac',
    'agentIds',
    'maxSignalAgeSeconds',
    'allowedIps',
    'createdAt',
  ],
);
export const AGENT_VIEW = objectSchema(
  {
    id: { type: 'string' },
    name: { type: 'string' },
    accountId: { type: 'string' },
    createdAt: TIME,
    lastSeenAt: { type: ['string', 'null'], format: 'date-time' },
    state: { type: ['object', 'null'], description: 'the last account snapshot the agent sent' },
  },
  ['id', 'name', 'accountId', 'createdAt', 'lastSeenAt', 'state'],
);
