import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { migrationDirectory, readMigrationFiles } from '../../src/store/migration-files.js';
import { openStore } from '../../src/store/open-store.js';
import type { Agent } from '../../src/store/records.js';
import { openSqliteStore, SQLITE_FILE_NAME, type SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { WalSync } from '../../src/store/sqlite/wal-sync.js';
import { at, PERIOD, request, seed } from './store-harness.js';

describe('SQLite store', () => {
  let dataDir: string;

  beforeEach(() => {
    dataDir = join(mkdtempSync(join(tmpdir(), 'signalgate-sqlite-')), 'nested', 'data');
  });

  afterEach(() => {
    rmSync(join(dataDir, '..', '..'), { recursive: true, force: true });
  });

  async function open(): Promise<SqliteStore> {
    const store = openSqliteStore({ dataDir });
    await store.migrate();
    return store;
  }

  it('creates the data directory and keeps signalgate.db in it, with WAL, synchronous=FULL, a busy timeout and foreign keys', async () => {
    const store = await open();
    try {
      expect(existsSync(join(dataDir, SQLITE_FILE_NAME))).toBe(true);
      expect(store.pragma('journal_mode')).toBe('wal');
      expect(store.pragma('synchronous')).toBe(2); // FULL
      expect(store.pragma('busy_timeout')).toBe(5000);
      expect(store.pragma('foreign_keys')).toBe(1);
      // WAL is a property of the file: another process opening it finds it too.
      const other = new Database(join(dataDir, SQLITE_FILE_NAME), { readonly: true });
      expect(other.pragma('journal_mode', { simple: true })).toBe('wal');
      other.close();
    } finally {
      await store.close();
    }
  });

  it('keeps committed data across a close and reopen, and applies each migration once', async () => {
    const first = await open();
    const seeded = await seed(first, { quota: 10, agents: 1 });
    const { record } = await first.ingest.commit(request(seeded, { idempotencyKey: 'k', requestHash: 'h' }));
    await first.close();

    const again = await openStore({ dataDir });
    try {
      expect(again.kind).toBe('sqlite');
      expect(await again.signals.get(record.id)).toMatchObject({
        ...record,
        deliveries: [{ seq: 1, status: 'queued' }],
      });
      expect(await again.usage.get(seeded.accountId, PERIOD)).toEqual({ period: PERIOD, used: 1, limit: 10 });
      expect((await again.ingest.commit(request(seeded, { idempotencyKey: 'k', requestHash: 'h' }))).kind).toBe(
        'replay',
      );
      await again.migrate();
    } finally {
      await again.close();
    }
    const db = new Database(join(dataDir, SQLITE_FILE_NAME), { readonly: true });
    const versions = db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as {
      version: number;
    }[];
    db.close();
    expect(versions.map((v) => v.version)).toEqual(readMigrationFiles('sqlite').map((f) => f.version));
  });

  it('fills the per-day counter from the log when migration 012 runs on a store that has none', async () => {
    const first = await open();
    const seeded = await seed(first, { quota: 10, agents: 0 });
    const guard = { bodyDigest: 'digest', since: '2000-01-01T00:00:00.000Z' };
    const reject = {
      kind: 'reject' as const,
      httpStatus: 422,
      problems: [{ code: 'MISSING_ACTION' as const, detail: 'x' }],
    };
    await first.ingest.commit(request(seeded, { duplicateCheck: guard }));
    expect((await first.ingest.commit(request(seeded, { duplicateCheck: guard }))).kind).toBe('duplicate');
    await first.ingest.commit(request(seeded, { verdict: reject }));
    const day = request(seeded).receivedAt.slice(0, 10);
    const counted = await first.signals.countPerDay(seeded.accountId, day, day);
    expect(counted).toEqual([{ day, accepted: 1, rejected: 1 }]);
    await first.close();
    // The store as migration 011 left it: no counter.
    const db = new Database(join(dataDir, SQLITE_FILE_NAME));
    db.exec(`DROP TRIGGER signals_per_day_on_delete; DROP TABLE signals_per_day;
             CREATE INDEX signals_account_duplicate_days ON signals (account_id, received_at, duplicate_of) WHERE duplicate_of IS NOT NULL;
             DELETE FROM schema_migrations WHERE version = 12;`);
    db.close();
    const again = await open();
    try {
      expect(await again.signals.countPerDay(seeded.accountId, day, day)).toEqual(counted);
    } finally {
      await again.close();
    }
  });

  it('commits ingests arriving in one event-loop turn in one transaction', async () => {
    const store = await open();
    try {
      const seeded = await seed(store, { quota: 1000, agents: 2 });
      const before = store.ingestTransactions;
      for (let i = 0; i < 3; i++) await store.ingest.commit(request(seeded));
      // Awaited one by one, each ingest is its own transaction.
      expect(store.ingestTransactions - before).toBe(3);

      const mid = store.ingestTransactions;
      const outcomes = await Promise.all(Array.from({ length: 100 }, () => store.ingest.commit(request(seeded))));
      expect(outcomes.every((o) => o.record.status === 'accepted')).toBe(true);
      expect(store.ingestTransactions - mid).toBeLessThanOrEqual(2);
      expect((await store.usage.get(seeded.accountId, PERIOD))!.used).toBe(103);
    } finally {
      await store.close();
    }
  });

  it('rolls back only the failing request of a batch', async () => {
    const store = await open();
    try {
      const seeded = await seed(store, { quota: 1000, agents: 1 });
      const before = store.ingestTransactions;
      const results = await Promise.allSettled([
        store.ingest.commit(request(seeded)),
        store.ingest.commit(request(seeded, { sourceId: 'src-missing' })),
        store.ingest.commit(request(seeded)),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(store.ingestTransactions - before).toBe(1);
      expect((await store.usage.get(seeded.accountId, PERIOD))!.used).toBe(2);
      expect(
        (await store.deliveries.take(seeded.agents[0]!.id, new Date().toISOString(), 10)).map((d) => d.seq),
      ).toEqual([1, 2]);
    } finally {
      await store.close();
    }
  });

  it('takes back the charge of a request whose insert failed after it was charged, in a batch', async () => {
    const store = await open();
    try {
      const seeded = await seed(store, { quota: 2, agents: 1 });
      const first = await store.ingest.commit(request(seeded));
      // Same signal id again: charged, then refused by the primary key, so its savepoint rolls
      // back. Its unit must go back to the batch's count, or the third request would be refused.
      const results = await Promise.allSettled([
        store.ingest.commit(request(seeded, { id: first.record.id })),
        store.ingest.commit(request(seeded)),
      ]);
      expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled']);
      const third = (results[1] as PromiseFulfilledResult<Awaited<ReturnType<typeof store.ingest.commit>>>).value;
      expect(third.record.status).toBe('accepted');
      expect(third.record.quota).toEqual({ period: PERIOD, used: 2, limit: 2 });
      expect(await store.usage.get(seeded.accountId, PERIOD)).toEqual({ period: PERIOD, used: 2, limit: 2 });
    } finally {
      await store.close();
    }
  });

  it('commits queued ingests before closing', async () => {
    const store = await open();
    const seeded = await seed(store, { quota: 10 });
    const pending = store.ingest.commit(request(seeded));
    await store.close();
    const { record } = await pending;
    const again = await open();
    try {
      expect((await again.signals.get(record.id))?.status).toBe('accepted');
      await expect(store.ingest.commit(request(seeded))).rejects.toThrow(/closed/);
    } finally {
      await again.close();
    }
  });

  it('sees writes committed by another connection to the same file (the CLI beside the server)', async () => {
    const server = await open();
    const cli = await open();
    try {
      const seeded = await seed(cli, { quota: 5, agents: 1 });
      const outcome = await server.ingest.commit(request(seeded));
      expect(outcome.record.quota).toEqual({ period: PERIOD, used: 1, limit: 5 });
      await cli.sources.update(seeded.source.id, { active: false }, new Date().toISOString());
      expect((await server.sources.get(seeded.source.id))!.active).toBe(false);
    } finally {
      await cli.close();
      await server.close();
    }
  });

  it("commits the agents' writes of one event-loop turn (presence, hand-outs, acks) in one transaction", async () => {
    const store = await open();
    try {
      const seeded = await seed(store, { agents: 3, route: [0, 1, 2] });
      const { record } = await store.ingest.commit(request(seeded));
      const before = store.agentWriteTransactions;
      const now = new Date().toISOString();
      const [taken] = await Promise.all([
        Promise.all(seeded.agents.map((agent) => store.deliveries.take(agent.id, now, 10))),
        Promise.all(seeded.agents.map((agent) => store.agents.touch(agent.id, now))),
      ]);
      expect(taken.map((signals) => signals.map((s) => s.id))).toEqual([[record.id], [record.id], [record.id]]);
      expect(store.agentWriteTransactions).toBe(before + 1);
      const acks = await Promise.all(
        seeded.agents.map((agent) =>
          store.deliveries.ack(agent.id, record.id, { status: 'executed', message: null, result: null }, now),
        ),
      );
      expect(acks.map((a) => a.kind)).toEqual(['acked', 'acked', 'acked']);
      expect(store.agentWriteTransactions).toBe(before + 2);
      expect((await store.signals.get(record.id))!.deliveries.map((d) => d.status)).toEqual([
        'executed',
        'executed',
        'executed',
      ]);
    } finally {
      await store.close();
    }
  });

  it("shows a ledger report's fills only once they are on disk and the report answered, also while the next report commits", async () => {
    const store = await open();
    const seeded = await seed(store);
    const agent = { id: seeded.agents[0]!.id, accountId: seeded.accountId };
    const now = new Date().toISOString();
    const fill = (venueFillId: string) => ({
      venueFillId,
      orderId: `o-${venueFillId}`,
      symbol: 'EURUSD',
      side: 'buy' as const,
      lots: 0.1,
      price: 1.1,
      fee: 0,
      feeCurrency: 'USD',
      at: now,
      signalId: null,
    });
    const report = (id: string) => store.ledger.record(agent, [fill(id)], [], now);
    const shownFills = async () => (await store.ledger.fills({ agentId: agent.id })).map((f) => f.venueFillId);
    try {
      const { shown, answered } = await readBesideOverlappingSyncs(report, shownFills, ['f1', 'f2']);
      expect(shown).toContain('f1');
      expect(shown.filter((id) => !answered.includes(id))).toEqual([]);
      expect(await shownFills()).toEqual(['f1', 'f2']);
    } finally {
      await store.close();
    }
  });

  it("shows a signal's acknowledgement in the log only once it is on disk and answered, also while the next one commits", async () => {
    const store = await open();
    const seeded = await seed(store, { agents: 1, route: [0] });
    const agentId = seeded.agents[0]!.id;
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) ids.push((await store.ingest.commit(request(seeded))).record.id);
    expect(await store.deliveries.take(agentId, at(5000), 10)).toHaveLength(2);
    const executed = async () =>
      (await store.signals.list({ sourceId: seeded.source.id, limit: 10 })).signals
        .filter((signal) => signal.outcome?.executed === 1)
        .map((signal) => signal.id);
    const ack = (id: string) =>
      store.deliveries.ack(agentId, id, { status: 'executed', message: null, result: null }, at(7000));
    try {
      const { shown, answered } = await readBesideOverlappingSyncs(ack, executed, [ids[0]!, ids[1]!]);
      expect(shown).toContain(ids[0]);
      expect(shown.filter((id) => !answered.includes(id))).toEqual([]);
      expect((await executed()).sort()).toEqual([...ids].sort());
    } finally {
      await store.close();
    }
  });

  it('keeps serving while another connection holds the write lock: an agent write waits for it a turn at a time, then commits', async () => {
    const store = await open();
    const other = new Database(join(dataDir, SQLITE_FILE_NAME));
    try {
      const seeded = await seed(store, { agents: 1 });
      const agentId = seeded.agents[0]!.id;
      other.exec('BEGIN IMMEDIATE');
      const touched = store.agents.touch(agentId, '2026-11-25T12:00:00.000Z');
      let settled = false;
      void touched.then(
        () => (settled = true),
        () => (settled = true),
      );
      // In SQLite's busy handler the call would hold this thread until the lock came free or the
      // busy timeout ran out (and then fail): here the event loop goes on, reads included.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(settled).toBe(false);
      expect((await store.agents.get(agentId))!.lastSeenAt).toBeNull();
      other.exec('COMMIT');
      await touched;
      expect((await store.agents.get(agentId))!.lastSeenAt).toBe('2026-11-25T12:00:00.000Z');
    } finally {
      other.close();
      await store.close();
    }
  });

  it("drops its cache of sources when another connection changes a source, among that connection's acks and hand-outs", async () => {
    const server = await open();
    const cli = await open();
    try {
      const seeded = await seed(cli, { agents: 1, route: [0] });
      const turn = () => new Promise((resolve) => setImmediate(resolve));
      expect((await server.sources.findByAuthKey(seeded.authKey))!.id).toBe(seeded.source.id);
      const { record } = await cli.ingest.commit(request(seeded));
      await cli.deliveries.take(seeded.agents[0]!.id, new Date().toISOString(), 10);
      await turn();
      expect((await server.sources.findByAuthKey(seeded.authKey))!.id).toBe(seeded.source.id);
      await cli.sources.update(seeded.source.id, { authKey: 'rotated-key' }, new Date().toISOString());
      await cli.deliveries.ack(
        seeded.agents[0]!.id,
        record.id,
        { status: 'executed', message: null, result: null },
        new Date().toISOString(),
      );
      await turn();
      expect(await server.sources.findByAuthKey(seeded.authKey)).toBeNull();
      expect((await server.sources.findByAuthKey('rotated-key'))!.id).toBe(seeded.source.id);
    } finally {
      await cli.close();
      await server.close();
    }
  });

  it("refuses an agent's token at the first check after another connection rotates it or deletes the agent, among that connection's agent writes", async () => {
    const server = await open();
    const cli = await open();
    try {
      const seeded = await seed(cli, { agents: 2, route: [0, 1] });
      const [rotated, deleted] = seeded.agents as [Agent, Agent];
      expect((await server.agents.findByTokenHash(rotated.tokenHash))!.id).toBe(rotated.id);
      expect((await server.agents.findByTokenHash(deleted.tokenHash))!.id).toBe(deleted.id);
      // Hand-outs, acks, presence and state reports leave every token as it was.
      const { record } = await cli.ingest.commit(request(seeded));
      const now = new Date().toISOString();
      await cli.deliveries.take(rotated.id, now, 10);
      await cli.deliveries.ack(rotated.id, record.id, { status: 'executed', message: null, result: null }, now);
      await cli.agents.saveState(rotated.id, { balance: 1 }, now);
      expect((await server.agents.findByTokenHash(rotated.tokenHash))!.id).toBe(rotated.id);
      // No turn in between: the very next check sees the commit.
      await cli.agents.rotateToken(rotated.id, 'rotated-digest');
      expect(await server.agents.findByTokenHash(rotated.tokenHash)).toBeNull();
      expect((await server.agents.findByTokenHash('rotated-digest'))!.id).toBe(rotated.id);
      await cli.sources.update(seeded.source.id, { agentIds: [rotated.id] }, new Date().toISOString());
      expect(await cli.agents.delete(deleted.id)).toEqual({ kind: 'deleted' });
      expect(await server.agents.findByTokenHash(deleted.tokenHash)).toBeNull();
    } finally {
      await cli.close();
      await server.close();
    }
  });

  it('finds its migrations beside the module, for both dialects', () => {
    expect(existsSync(migrationDirectory('sqlite'))).toBe(true);
    expect(existsSync(migrationDirectory('postgres'))).toBe(true);
    // The dialects' histories may differ (PostgreSQL's 002 adds its server-side ingest function);
    // both start from the same initial schema.
    expect(readMigrationFiles('sqlite')[0]).toMatchObject({ version: 1, name: 'initial' });
    expect(readMigrationFiles('postgres')[0]).toMatchObject({ version: 1, name: 'initial' });
  });

  it('commits a burst, turns of 50 and serial ingests each once, grouped by the turn they arrive in', async () => {
    // How fast is for the benchmark (npm run bench -- --store-ingest); this is what it must do.
    const store = await open();
    try {
      const seeded = await seed(store, { quota: 100_000, agents: 1 });
      const burst = 5000;
      const before = store.ingestTransactions;
      const outcomes = await Promise.all(Array.from({ length: burst }, () => store.ingest.commit(request(seeded))));
      expect(store.ingestTransactions - before).toBeLessThanOrEqual(2);

      // Arrivals spread over turns, 50 per turn: closer to a busy HTTP server.
      const spread = 5000;
      const mid = store.ingestTransactions;
      for (let i = 0; i < spread / 50; i++) {
        outcomes.push(...(await Promise.all(Array.from({ length: 50 }, () => store.ingest.commit(request(seeded))))));
      }
      expect(store.ingestTransactions - mid).toBeLessThanOrEqual((spread / 50) * 2);

      const serial = 300;
      const late = store.ingestTransactions;
      for (let i = 0; i < serial; i++) outcomes.push(await store.ingest.commit(request(seeded)));
      expect(store.ingestTransactions - late).toBe(serial);

      expect(outcomes.every((o) => o.record.status === 'accepted')).toBe(true);
      expect(new Set(outcomes.map((o) => o.record.id)).size).toBe(burst + spread + serial);
      expect((await store.usage.get(seeded.accountId, PERIOD))!.used).toBe(burst + spread + serial);
    } finally {
      await store.close();
    }
  });
});

/**
 * The disk answering each sync of the WAL only when told: `write(first)` commits and its sync is
 * held; `read` is asked; `write(second)` commits while the first sync is still under way; then
 * the first sync is let through, and the second. What the read showed, and which writes had been
 * answered when it did.
 */
async function readBesideOverlappingSyncs(
  write: (id: string) => Promise<unknown>,
  read: () => Promise<string[]>,
  [firstId, secondId]: [string, string],
): Promise<{ shown: string[]; answered: string[] }> {
  const syncs: Array<() => void> = [];
  const held = vi
    .spyOn(WalSync.prototype, 'sync')
    .mockImplementation(() => new Promise<void>((resolve) => syncs.push(resolve)));
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  try {
    const answered: string[] = [];
    const written = (id: string) => write(id).then(() => answered.push(id));
    const first = written(firstId);
    await turn();
    const reading = read().then((shown) => ({ shown, answered: [...answered] }));
    const second = written(secondId);
    await turn();
    expect(syncs).toHaveLength(2);
    syncs[0]!();
    const seen = await reading;
    syncs[1]!();
    await Promise.all([first, second]);
    return seen;
  } finally {
    held.mockRestore();
    for (const release of syncs) release();
  }
}
