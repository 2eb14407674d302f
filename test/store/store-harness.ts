import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Problem } from '../../src/errors/catalog.js';
import type { NormalizedSignal } from '../../src/language/index.js';
import { storedAuthKey } from '../../src/store/auth-key-hash.js';
import { openStore } from '../../src/store/open-store.js';
import type { Agent, Source } from '../../src/store/records.js';
import type { IngestRequest, IngestVerdict, Store } from '../../src/store/store.js';
import { freshPostgresSchema } from '../support/postgres.js';

/** A place to open stores in: a temp directory (SQLite) or a fresh schema (PostgreSQL). */
export interface StoreHarness {
  name: 'sqlite' | 'postgres';
  /** Opens (and migrates) another store instance on the same data. */
  open(): Promise<Store>;
  dispose(): Promise<void>;
}

export async function sqliteHarness(): Promise<StoreHarness & { dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'signalgate-store-'));
  return {
    name: 'sqlite',
    dataDir,
    open: () => openStore({ dataDir }),
    dispose: async () => rmSync(dataDir, { recursive: true, force: true }),
  };
}

export async function postgresHarness(label: string): Promise<StoreHarness & { schema: string }> {
  const pg = await freshPostgresSchema(label);
  return {
    name: 'postgres',
    schema: pg.schema,
    open: () => openStore({ dataDir: '/nonexistent', databaseUrl: pg.connectionString, schema: pg.schema }),
    dispose: () => pg.drop(),
  };
}

/**
 * The stores every contract file runs its tests on, unchanged: the embedded SQLite store and
 * PostgreSQL (a schema of its own, named after `label`).
 */
export function contractStores(
  label: string,
): Array<{ name: 'sqlite' | 'postgres'; harness: () => Promise<StoreHarness> }> {
  return [
    { name: 'sqlite', harness: () => sqliteHarness() },
    { name: 'postgres', harness: () => postgresHarness(label) },
  ];
}

export const T0 = Date.parse('2030-01-15T12:00:00.000Z');
export const PERIOD = '2030-01';

/** `T0` plus `ms`, as the ISO string the store keeps. */
export function at(ms: number): string {
  return new Date(T0 + ms).toISOString();
}

export const BUY: NormalizedSignal = { symbol: 'EURUSD', action: 'buy', volume: { type: 'lots', value: 0.1 } };

export const QUOTA_PROBLEM: Problem = {
  code: 'QUOTA_SIGNALS_IN',
  detail: 'The monthly signal quota of 50 is used up.',
};

export interface Seeded {
  accountId: string;
  source: Source;
  agents: Agent[];
  /** The source's key in clear, as its creator was shown it (the store keeps its digest). */
  authKey: string;
}

/** A fresh account with `agents` agents and one source routing to `route` (indexes into agents) or to all. */
export async function seed(
  store: Store,
  options: { quota?: number; agents?: number; route?: number[] } = {},
): Promise<Seeded> {
  const accountId = `acc-${randomUUID()}`;
  await store.accounts.create({
    id: accountId,
    name: 'Desk',
    monthlySignalQuota: options.quota ?? 1000,
    createdAt: at(0),
  });
  const agents: Agent[] = [];
  for (let i = 0; i < (options.agents ?? 1); i++) {
    const agent: Agent = {
      id: `agt-${i}-${randomUUID()}`,
      accountId,
      name: `agent ${i}`,
      tokenHash: randomUUID(),
      createdAt: at(i),
      lastSeenAt: null,
      state: null,
    };
    await store.agents.create(agent);
    agents.push(agent);
  }
  const authKey = `key-${randomUUID()}`;
  const source: Source = {
    id: `src-${randomUUID()}`,
    accountId,
    name: 'TradingView',
    ...storedAuthKey(authKey),
    active: true,
    hmacSecret: null,
    agentIds: (options.route ?? []).map((i) => agents[i]!.id),
    allowedIps: [],
    maxSignalAgeSeconds: 120,
    duplicateWindowSeconds: 0,
    createdAt: at(0),
    revision: 0,
  };
  await store.sources.create(source);
  return { accountId, source, agents, authKey };
}

export function accept(signal: NormalizedSignal = BUY, expiresAt = at(3_600_000)): IngestVerdict {
  return { kind: 'accept', signal, signalJson: JSON.stringify(signal), expiresAt, quotaExhausted: QUOTA_PROBLEM };
}

/** An inbound request on the seeded source; fields may be overridden. */
export function request(seeded: Seeded, overrides: Partial<IngestRequest> = {}): IngestRequest {
  return {
    id: `sig-${randomUUID()}`,
    sourceId: seeded.source.id,
    sourceRevision: seeded.source.revision,
    accountId: seeded.accountId,
    receivedAt: at(1000),
    period: PERIOD,
    contentType: 'text/plain',
    rawBody: 'EURUSD,buy,vol=0.1',
    idempotencyKey: null,
    requestHash: null,
    idempotencySince: at(1000 - 86_400_000),
    duplicateCheck: null,
    verdict: accept(),
    ...overrides,
  };
}
