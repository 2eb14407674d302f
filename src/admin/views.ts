import type { Account, Agent, Source } from '../store/records.js';

/** How records are shown by the admin API and the CLI (CONTRACT §2). Secrets never appear. */

export function sourceView(source: Source, publicUrl: string) {
  return {
    id: source.id,
    accountId: source.accountId,
    name: source.name,
    authKey: source.authKey,
    inboundUrl: `${publicUrl}/api/inbound/${source.authKey}`,
    active: source.active,
    hmac: source.hmacSecret !== null,
    agentIds: source.agentIds,
    maxSignalAgeSeconds: source.maxSignalAgeSeconds,
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

export function agentView(agent: Agent) {
  return {
    id: agent.id,
    name: agent.name,
    accountId: agent.accountId,
    createdAt: agent.createdAt,
    lastSeenAt: agent.lastSeenAt,
    state: agent.state ?? null,
  };
}
