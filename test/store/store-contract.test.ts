import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Problem } from '../../src/errors/catalog.js';
import type { NormalizedSignal } from '../../src/language/index.js';
import { BackupError } from '../../src/store/backup-error.js';
import { storedAuthKey } from '../../src/store/auth-key-hash.js';
import type { Agent, ExpiredDelivery, SignalStatus } from '../../src/store/records.js';
import type { AgentSessionClaim, IngestRequest, SignalFilter, Store } from '../../src/store/store.js';
import {
  accept,
  at,
  BUY,
  PERIOD,
  postgresHarness,
  QUOTA_PROBLEM,
  request,
  seed,
  sqliteHarness,
  type Seeded,
  type StoreHarness,
} from './store-harness.js';

/** The Store contract, run unchanged against both implementations. */
describe.each([
  { name: 'sqlite', harness: () => sqliteHarness() },
  { name: 'postgres', harness: () => postgresHarness('contract') },
])('$name store', ({ name, harness: makeHarness }) => {
  let harness: StoreHarness;
  let store: Store;

  beforeAll(async () => {
    harness = await makeHarness();
    store = await harness.open();
  });

  afterAll(async () => {
    await store?.close();
    await harness?.dispose();
  });

  describe('backup', () => {
    it('writes a copy that holds what was committed (SQLite), or names pg_dump (PostgreSQL), and never overwrites a file', async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-contract-backup-'));
      try {
        const seeded = await seed(store, { agents: 1 });
        const outcome = await store.ingest.commit(request(seeded));
        const file = path.join(dir, 'copy.db');
        if (name === 'postgres') {
          await expect(store.backup(file)).rejects.toThrow(/pg_dump/);
          expect(existsSync(file)).toBe(false);
          return;
        }
        await store.backup(file);
        const copy = new Database(file, { readonly: true });
        try {
          expect(copy.prepare('SELECT id FROM signals WHERE id = ?').get(outcome.record.id)).toEqual({ id: outcome.record.id });
        } finally {
          copy.close();
        }
        await expect(store.backup(file)).rejects.toThrow(BackupError);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('settings', () => {
    it('keeps the first claimed value and answers it to later claims', async () => {
      const name = `admin-token-${randomUUID()}`;
      expect(await store.settings.get(name)).toBeNull();
      expect(await store.settings.claim(name, 'first')).toBe('first');
      expect(await store.settings.claim(name, 'second')).toBe('first');
      expect(await store.settings.get(name)).toBe('first');
    });

    it('deletes a setting, after which a claim takes the new value', async () => {
      const name = `admin-token-${randomUUID()}`;
      await store.settings.claim(name, 'first');
      await store.settings.delete(name);
      expect(await store.settings.get(name)).toBeNull();
      await store.settings.delete(name);
      expect(await store.settings.claim(name, 'second')).toBe('second');
    });

    it('answers the same value to concurrent claims', async () => {
      const name = `race-${randomUUID()}`;
      const values = await Promise.all(Array.from({ length: 10 }, (_, i) => store.settings.claim(name, `v${i}`)));
      expect(new Set(values).size).toBe(1);
    });
  });

  describe('accounts, agents, sources', () => {
    it('stores and answers accounts and their usage', async () => {
      const id = `acc-${randomUUID()}`;
      const account = { id, name: 'Main desk', monthlySignalQuota: 500, createdAt: at(0) };
      await store.accounts.create(account);
      expect(await store.accounts.get(id)).toEqual(account);
      expect(await store.accounts.get('no-such-account')).toBeNull();
      expect(await store.usage.get(id, PERIOD)).toEqual({ period: PERIOD, used: 0, limit: 500 });
      expect(await store.usage.get('no-such-account', PERIOD)).toBeNull();
    });

    it('refuses a second account with the same id', async () => {
      const account = { id: `acc-${randomUUID()}`, name: 'A', monthlySignalQuota: 1, createdAt: at(0) };
      await store.accounts.create(account);
      await expect(store.accounts.create(account)).rejects.toThrow();
    });

    it('stores agents, finds them by token hash, lists them and records their state', async () => {
      const { accountId, agents } = await seed(store, { agents: 2 });
      const [first, second] = agents as [(typeof agents)[0], (typeof agents)[0]];
      expect(await store.agents.get(first.id)).toEqual(first);
      // Who the token belongs to, never the agent's state: the check on every agent request reads no more.
      expect(await store.agents.findByTokenHash(second.tokenHash)).toEqual({ id: second.id, accountId, name: second.name, tokenHash: second.tokenHash });
      expect(await store.agents.findByTokenHash('unknown')).toBeNull();
      expect((await store.agents.list({ accountId, limit: 10 })).items.map((a) => a.id)).toEqual([second.id, first.id]);
      expect(await store.agents.list({ accountId: 'no-such-account', limit: 10 })).toEqual({ items: [], next: null });

      const state = { balance: 10_000.5, currency: 'USD', positions: [{ symbol: 'EURUSD', volume: 0.1 }] };
      await store.agents.saveState(first.id, state, at(5000));
      expect(await store.agents.get(first.id)).toMatchObject({ state, lastSeenAt: at(5000) });
      // The list carries the state as the text it was stored as, JSON.stringify's, unparsed.
      const listed = (await store.agents.list({ accountId, limit: 10 })).items;
      expect(listed.map((a) => [a.id, a.stateJson, a.lastSeenAt])).toEqual([[second.id, null, null], [first.id, JSON.stringify(state), at(5000)]]);
      await store.agents.touch(first.id, at(9000));
      expect(await store.agents.get(first.id)).toMatchObject({ state, lastSeenAt: at(9000) });
      expect(await store.agents.get(second.id)).toMatchObject({ state: null, lastSeenAt: null });
    });

    it('stores sources, finds them by auth key and applies patches', async () => {
      const { source, agents, authKey } = await seed(store, { agents: 2 });
      expect(await store.sources.get(source.id)).toEqual(source);
      expect(await store.sources.findByAuthKey(authKey)).toEqual(source);
      expect(await store.sources.findByAuthKey(authKey + 'x')).toBeNull();

      const patched = await store.sources.update(source.id, {
        name: 'Renamed',
        active: false,
        hmacSecret: 's3cret',
        agentIds: [agents[1]!.id],
        maxSignalAgeSeconds: 30,
        allowedIps: ['tradingview', '203.0.113.0/24', '2001:db8::1'],
      }, new Date().toISOString());
      const expected = {
        ...source,
        name: 'Renamed',
        active: false,
        hmacSecret: 's3cret',
        agentIds: [agents[1]!.id],
        maxSignalAgeSeconds: 30,
        allowedIps: ['tradingview', '203.0.113.0/24', '2001:db8::1'],
        revision: 1,
      };
      expect(patched).toEqual(expected);
      expect(await store.sources.get(source.id)).toEqual(expected);

      // Clearing the secret and rotating the key: the old key stops naming the source at once.
      const newKey = 'new-key-' + randomUUID();
      const rotated = await store.sources.update(source.id, { hmacSecret: null, authKey: newKey }, new Date().toISOString());
      expect(rotated?.hmacSecret).toBeNull();
      expect(rotated?.name).toBe('Renamed');
      expect(rotated).toMatchObject({ authKeyHash: createHash('sha256').update(newKey).digest('hex'), authKeyHint: 'new-' });
      expect(await store.sources.findByAuthKey(authKey)).toBeNull();
      expect(await store.sources.findByAuthKey(newKey)).toEqual(rotated);
      expect(rotated?.allowedIps).toEqual(['tradingview', '203.0.113.0/24', '2001:db8::1']);
      const anyAddress = await store.sources.update(source.id, { allowedIps: [] }, new Date().toISOString());
      expect(anyAddress).toMatchObject({ allowedIps: [], revision: 3 });
      expect(await store.sources.findByAuthKey(newKey)).toEqual(anyAddress);
      expect(await store.sources.update('no-such-source', { name: 'x' }, new Date().toISOString())).toBeNull();
    });
  });

  describe('ingest', () => {
    it('records an accepted signal as accepted, with outcome {queued: N}, charges the quota and queues one delivery per agent', async () => {
      const seeded = await seed(store, { quota: 10, agents: 2 });
      const req = request(seeded, { idempotencyKey: 'k1', requestHash: 'h1' });
      const outcome = await store.ingest.commit(req);
      expect(outcome.kind).toBe('recorded');
      expect(outcome.record).toEqual({
        id: req.id,
        sourceId: seeded.source.id,
        accountId: seeded.accountId,
        receivedAt: req.receivedAt,
        status: 'accepted',
        httpStatus: 202,
        code: null,
        detail: null,
        param: null,
        errors: null,
        contentType: 'text/plain',
        rawBody: req.rawBody,
        signal: BUY,
        idempotencyKey: 'k1',
        quota: { period: PERIOD, used: 1, limit: 10 },
        duplicateOf: null,
        outcome: { queued: 2 },
      });
      expect(await store.usage.get(seeded.accountId, PERIOD)).toEqual({ period: PERIOD, used: 1, limit: 10 });

      const stored = await store.signals.get(req.id);
      expect(stored).toMatchObject(outcome.record);
      const agentIds = seeded.agents.map((a) => a.id).sort();
      expect(stored!.deliveries).toEqual(
        agentIds.map((agentId) => ({
          signalId: req.id,
          agentId,
          seq: 1,
          status: 'queued',
          expiresAt: at(3_600_000),
          deliveredAt: null,
          attempts: 0,
          ackedAt: null,
          message: null,
          result: null,
          ackedAfterExpiry: false,
        })),
      );
    });

    it('records a rejected request with its first problem, all problems when several, and charges nothing', async () => {
      const seeded = await seed(store, { quota: 10 });
      const problems: Problem[] = [
        { code: 'UNKNOWN_PARAMETER', detail: "unknown parameter 'sl'; did you mean sl_pips?", param: 'sl' },
        { code: 'INVALID_VOLUME', detail: 'vol must be a number above 0', param: 'vol' },
      ];
      const several = await store.ingest.commit(request(seeded, { verdict: { kind: 'reject', httpStatus: 422, problems } }));
      expect(several.kind).toBe('recorded');
      expect(several.record).toMatchObject({
        status: 'rejected',
        httpStatus: 422,
        code: 'UNKNOWN_PARAMETER',
        detail: problems[0]!.detail,
        param: 'sl',
        errors: problems,
        signal: null,
        quota: null,
      });

      const one = await store.ingest.commit(
        request(seeded, {
          rawBody: '{"symbol":',
          contentType: 'application/json',
          verdict: { kind: 'reject', httpStatus: 400, problems: [{ code: 'PARSE_ERROR', detail: 'Body is not JSON.' }] },
        }),
      );
      expect(one.record).toMatchObject({ status: 'rejected', httpStatus: 400, code: 'PARSE_ERROR', param: null, errors: null });
      expect(await store.signals.get(one.record.id)).toMatchObject({ ...one.record, deliveries: [] });
      expect((await store.usage.get(seeded.accountId, PERIOD))!.used).toBe(0);
    });

    it('keeps raw bodies and details exactly, NUL characters and all', async () => {
      const seeded = await seed(store);
      const rawBody = 'EURUSD,buy,comment="a\u0000b", ünïcødé 🚀';
      const outcome = await store.ingest.commit(
        request(seeded, {
          rawBody,
          verdict: { kind: 'reject', httpStatus: 400, problems: [{ code: 'PARSE_ERROR', detail: 'bad byte' }] },
        }),
      );
      expect((await store.signals.get(outcome.record.id))!.rawBody).toBe(rawBody);
      const withSignal = await store.ingest.commit(
        request(seeded, { rawBody, verdict: accept({ symbol: 'EURUSD', action: 'buy', comment: 'a\u0000b 🚀' }) }),
      );
      expect((await store.signals.get(withSignal.record.id))!.signal).toEqual({
        symbol: 'EURUSD',
        action: 'buy',
        comment: 'a\u0000b 🚀',
      });
    });

    it('records the quota refusal as rejected 429 without a charge or deliveries once the quota is used up', async () => {
      const seeded = await seed(store, { quota: 2 });
      const first = await store.ingest.commit(request(seeded));
      const second = await store.ingest.commit(request(seeded));
      const third = await store.ingest.commit(request(seeded));
      expect(first.record.quota).toEqual({ period: PERIOD, used: 1, limit: 2 });
      expect(second.record.quota).toEqual({ period: PERIOD, used: 2, limit: 2 });
      expect(third.record).toMatchObject({
        status: 'rejected',
        httpStatus: 429,
        code: 'QUOTA_SIGNALS_IN',
        detail: QUOTA_PROBLEM.detail,
        param: null,
        errors: null,
        signal: null,
        quota: null,
      });
      expect((await store.signals.get(third.record.id))!.deliveries).toEqual([]);
      expect(await store.usage.get(seeded.accountId, PERIOD)).toEqual({ period: PERIOD, used: 2, limit: 2 });
      // A new period starts from zero.
      const nextMonth = await store.ingest.commit(request(seeded, { period: '2030-02', receivedAt: at(40 * 86_400_000) }));
      expect(nextMonth.record.quota).toEqual({ period: '2030-02', used: 1, limit: 2 });
    });

    it('refuses every signal of an account whose quota is zero', async () => {
      const seeded = await seed(store, { quota: 0 });
      const outcome = await store.ingest.commit(request(seeded));
      expect(outcome.record).toMatchObject({ status: 'rejected', httpStatus: 429 });
      expect(await store.usage.get(seeded.accountId, PERIOD)).toEqual({ period: PERIOD, used: 0, limit: 0 });
    });

    it('charges exactly the quota under 200 concurrent ingests', async () => {
      const seeded = await seed(store, { quota: 50, agents: 1 });
      const outcomes = await Promise.all(Array.from({ length: 200 }, () => store.ingest.commit(request(seeded))));
      const queued = outcomes.filter((o) => o.record.status === 'accepted');
      const refused = outcomes.filter((o) => o.record.status === 'rejected');
      expect(queued).toHaveLength(50);
      expect(refused).toHaveLength(150);
      expect(refused.every((o) => o.record.httpStatus === 429)).toBe(true);
      expect(queued.map((o) => o.record.quota!.used).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 50 }, (_, i) => i + 1),
      );
      expect(await store.usage.get(seeded.accountId, PERIOD)).toEqual({ period: PERIOD, used: 50, limit: 50 });
      expect((await store.signals.list({ sourceId: seeded.source.id, status: 'accepted', limit: 500 })).signals).toHaveLength(50);
      expect((await store.signals.list({ sourceId: seeded.source.id, status: 'rejected', limit: 500 })).signals).toHaveLength(150);
      const delivered = await store.deliveries.take(seeded.agents[0]!.id, at(2000), 500);
      expect(delivered.map((d) => d.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    });

    it('accepts the signals of one turn within the quota in order and refuses the rest, per account', async () => {
      const seeded = await seed(store, { quota: 4, agents: 1 });
      const other = await seed(store, { quota: 2, agents: 1 });
      const before = await store.ingest.commit(request(seeded));
      // One turn: both stores commit it together, the two accounts' signals interleaved, one a rejection.
      const requests = [
        request(seeded),
        request(other),
        request(seeded, { verdict: { kind: 'reject', httpStatus: 422, problems: [{ code: 'MISSING_SYMBOL', detail: 'No symbol given.' }] } }),
        request(seeded),
        request(other),
        request(seeded),
        request(other),
        request(seeded),
      ];
      const outcomes = await Promise.all(requests.map((r) => store.ingest.commit(r)));
      expect(outcomes.map((o) => [o.record.status, o.record.httpStatus, o.record.quota?.used ?? null])).toEqual([
        ['accepted', 202, 2],
        ['accepted', 202, 1],
        ['rejected', 422, null],
        ['accepted', 202, 3],
        ['accepted', 202, 2],
        ['accepted', 202, 4],
        ['rejected', 429, null],
        ['rejected', 429, null],
      ]);
      expect(outcomes[7]!.record).toMatchObject({ code: 'QUOTA_SIGNALS_IN', quota: null, outcome: null });
      expect(await store.usage.get(seeded.accountId, PERIOD)).toEqual({ period: PERIOD, used: 4, limit: 4 });
      expect(await store.usage.get(other.accountId, PERIOD)).toEqual({ period: PERIOD, used: 2, limit: 2 });
      const delivered = await store.deliveries.take(seeded.agents[0]!.id, at(2000), 10);
      expect(delivered.map((d) => [d.id, d.seq])).toEqual([before.record.id, requests[0]!.id, requests[3]!.id, requests[5]!.id].map((id, i) => [id, i + 1]));
    });
  });

  describe('idempotency keys', () => {
    it('answers a repeat with the original, without charging or delivering again', async () => {
      const seeded = await seed(store, { quota: 10, agents: 1 });
      const original = await store.ingest.commit(request(seeded, { idempotencyKey: 'retry-1', requestHash: 'h' }));
      const repeat = await store.ingest.commit(
        request(seeded, { idempotencyKey: 'retry-1', requestHash: 'h', receivedAt: at(60_000) }),
      );
      expect(repeat).toEqual({ kind: 'replay', record: original.record });
      expect((await store.usage.get(seeded.accountId, PERIOD))!.used).toBe(1);
      expect(await store.deliveries.take(seeded.agents[0]!.id, at(61_000), 10)).toHaveLength(1);
      expect((await store.signals.list({ sourceId: seeded.source.id, limit: 10 })).signals).toHaveLength(1);
    });

    it('replays a rejection just like an acceptance', async () => {
      const seeded = await seed(store);
      const verdict = {
        kind: 'reject' as const,
        httpStatus: 422,
        problems: [{ code: 'MISSING_SYMBOL' as const, detail: 'No symbol given.' }],
      };
      const original = await store.ingest.commit(request(seeded, { idempotencyKey: 'k', requestHash: 'h', verdict }));
      const repeat = await store.ingest.commit(request(seeded, { idempotencyKey: 'k', requestHash: 'h', verdict: accept() }));
      expect(repeat).toEqual({ kind: 'replay', record: original.record });
    });

    it('does not bind a quota refusal to the key: the retry is evaluated afresh', async () => {
      const seeded = await seed(store, { quota: 1 });
      await store.ingest.commit(request(seeded));
      const refused = await store.ingest.commit(request(seeded, { idempotencyKey: 'q', requestHash: 'h' }));
      expect(refused.record).toMatchObject({ status: 'rejected', httpStatus: 429 });
      // Next period, the same retry is a new request and is accepted.
      const retry = await store.ingest.commit(
        request(seeded, { idempotencyKey: 'q', requestHash: 'h', period: '2030-02', receivedAt: at(40 * 86_400_000) }),
      );
      expect(retry.kind).toBe('recorded');
      expect(retry.record.status).toBe('accepted');
      const again = await store.ingest.commit(request(seeded, { idempotencyKey: 'q', requestHash: 'h', period: '2030-02' }));
      expect(again).toEqual({ kind: 'replay', record: retry.record });
    });

    it('records a request that comes back with the key and another body as its own 422 entry, leaving the key bound', async () => {
      const seeded = await seed(store, { agents: 1 });
      const original = await store.ingest.commit(request(seeded, { idempotencyKey: 'k', requestHash: 'body-a' }));
      const otherRequest = request(seeded, { idempotencyKey: 'k', requestHash: 'body-b', rawBody: 'GBPUSD,sell', receivedAt: at(2000) });
      const other = await store.ingest.commit(otherRequest);
      expect(other.kind).toBe('key_reused');
      expect(other.kind === 'key_reused' && other.originalId).toBe(original.record.id);
      expect(other.record).toEqual({
        id: otherRequest.id,
        sourceId: seeded.source.id,
        accountId: seeded.accountId,
        receivedAt: at(2000),
        status: 'rejected',
        httpStatus: 422,
        code: 'IDEMPOTENCY_KEY_REUSED',
        detail: expect.stringContaining(original.record.id),
        param: 'Idempotency-Key',
        errors: null,
        contentType: 'text/plain',
        rawBody: 'GBPUSD,sell',
        signal: null,
        idempotencyKey: 'k',
        quota: null,
        duplicateOf: null,
        outcome: null,
      });
      expect(await store.signals.get(otherRequest.id)).toEqual({ ...other.record, deliveries: [] });
      expect((await store.usage.get(seeded.accountId, PERIOD))!.used).toBe(1);
      expect((await store.deliveries.take(seeded.agents[0]!.id, at(3000), 10)).map((d) => d.id)).toEqual([original.record.id]);
      // The key stays with the original: its repeat is still a replay, another refusal is another entry.
      expect(await store.ingest.commit(request(seeded, { idempotencyKey: 'k', requestHash: 'body-a' }))).toEqual({
        kind: 'replay',
        // Its outcome as it is now: the delivery was handed out since.
        record: { ...original.record, outcome: { delivered: 1 } },
      });
      const third = await store.ingest.commit(request(seeded, { idempotencyKey: 'k', requestHash: 'body-c', receivedAt: at(4000) }));
      expect(third.kind).toBe('key_reused');
      expect(third.record.id).not.toBe(other.record.id);
      const log = (await store.signals.list({ sourceId: seeded.source.id, limit: 10 })).signals;
      expect(log.map((s) => s.id)).toEqual([third.record.id, other.record.id, original.record.id]);
    });

    it('lets a new request take a key over once the original left the replay window', async () => {
      const seeded = await seed(store);
      const original = await store.ingest.commit(request(seeded, { idempotencyKey: 'k', requestHash: 'h', receivedAt: at(0) }));
      // Still inside the window when the original was received exactly at its start.
      const inside = await store.ingest.commit(
        request(seeded, { idempotencyKey: 'k', requestHash: 'h', receivedAt: at(86_400_000), idempotencySince: at(0) }),
      );
      expect(inside.kind).toBe('replay');
      const later = request(seeded, {
        idempotencyKey: 'k',
        requestHash: 'h',
        receivedAt: at(86_400_001),
        idempotencySince: at(1),
      });
      const taken = await store.ingest.commit(later);
      expect(taken.kind).toBe('recorded');
      expect(taken.record.id).toBe(later.id);
      expect(taken.record.id).not.toBe(original.record.id);
      const again = await store.ingest.commit(
        request(seeded, { idempotencyKey: 'k', requestHash: 'h', receivedAt: at(86_400_002), idempotencySince: at(2) }),
      );
      expect(again).toEqual({ kind: 'replay', record: taken.record });
      expect((await store.usage.get(seeded.accountId, PERIOD))!.used).toBe(2);
    });

    it('replays the record as stored, raw body bytes and all', async () => {
      const seeded = await seed(store);
      const rawBody = 'EURUSD,buy,comment="a\u0000b", ünïcødé 🚀 \\x00';
      const problems = [
        { code: 'UNKNOWN_PARAMETER' as const, detail: "unknown parameter 'c\u0000'", param: 'c' },
        { code: 'MISSING_ACTION' as const, detail: 'no action' },
      ];
      const original = await store.ingest.commit(
        request(seeded, { rawBody, idempotencyKey: 'k', requestHash: 'h', verdict: { kind: 'reject', httpStatus: 422, problems } }),
      );
      const stored = await store.signals.get(original.record.id);
      const { deliveries, ...record } = stored!;
      expect(deliveries).toEqual([]);
      expect(record.rawBody).toBe(rawBody);
      const repeat = await store.ingest.commit(request(seeded, { rawBody, idempotencyKey: 'k', requestHash: 'h' }));
      expect(repeat).toEqual({ kind: 'replay', record });
      const accepted = await store.ingest.commit(
        request(seeded, { rawBody, idempotencyKey: 'k2', requestHash: 'h', verdict: accept({ ...BUY, comment: 'x\u0000y 🚀' }) }),
      );
      const again = await store.ingest.commit(request(seeded, { rawBody, idempotencyKey: 'k2', requestHash: 'h' }));
      expect(again).toEqual({ kind: 'replay', record: accepted.record });
    });

    it('frees the key of a quota refusal for the next request with that key in the same turn', async () => {
      const seeded = await seed(store, { quota: 1 });
      const outcomes = await Promise.all([
        store.ingest.commit(request(seeded)),
        store.ingest.commit(request(seeded, { idempotencyKey: 'q', requestHash: 'h' })),
        store.ingest.commit(request(seeded, { idempotencyKey: 'q', requestHash: 'h' })),
      ]);
      expect(outcomes.map((o) => [o.kind, o.record.httpStatus])).toEqual([
        ['recorded', 202],
        ['recorded', 429],
        ['recorded', 429],
      ]);
      expect(outcomes[2]!.record.id).not.toBe(outcomes[1]!.record.id);
    });

    it('scopes keys to their source', async () => {
      const a = await seed(store);
      const b = await seed(store);
      expect((await store.ingest.commit(request(a, { idempotencyKey: 'same', requestHash: 'h' }))).kind).toBe('recorded');
      expect((await store.ingest.commit(request(b, { idempotencyKey: 'same', requestHash: 'h' }))).kind).toBe('recorded');
    });

    it('records exactly one signal when the same key arrives 30 times at once', async () => {
      const seeded = await seed(store, { quota: 100, agents: 1 });
      const outcomes = await Promise.all(
        Array.from({ length: 30 }, () => store.ingest.commit(request(seeded, { idempotencyKey: 'burst', requestHash: 'h' }))),
      );
      const recorded = outcomes.filter((o) => o.kind === 'recorded');
      expect(recorded).toHaveLength(1);
      expect(outcomes.filter((o) => o.kind === 'replay')).toHaveLength(29);
      expect(outcomes.every((o) => o.record.id === recorded[0]!.record.id)).toBe(true);
      expect((await store.usage.get(seeded.accountId, PERIOD))!.used).toBe(1);
      expect((await store.signals.list({ sourceId: seeded.source.id, limit: 100 })).signals).toHaveLength(1);
      expect(await store.deliveries.take(seeded.agents[0]!.id, at(2000), 100)).toHaveLength(1);
    });
  });

  describe('routing and sequence', () => {
    it("routes to the source's agents, or to every agent of the account when the list is empty", async () => {
      const seeded = await seed(store, { agents: 3, route: [0, 2] });
      const outcome = await store.ingest.commit(request(seeded));
      const deliveries = (await store.signals.get(outcome.record.id))!.deliveries;
      expect(deliveries.map((d) => d.agentId)).toEqual([seeded.agents[0]!.id, seeded.agents[2]!.id].sort());

      await store.sources.update(seeded.source.id, { agentIds: [] }, new Date().toISOString());
      const toAll = await store.ingest.commit(request(seeded, { sourceRevision: 1 }));
      const all = (await store.signals.get(toAll.record.id))!.deliveries;
      expect(all.map((d) => d.agentId)).toEqual(seeded.agents.map((a) => a.id).sort());
    });

    it("never routes to agents that do not exist or belong to another account", async () => {
      const seeded = await seed(store, { agents: 1 });
      const stranger = await seed(store, { agents: 1 });
      await store.sources.update(seeded.source.id, {
        agentIds: [seeded.agents[0]!.id, stranger.agents[0]!.id, 'agt-missing'],
      }, new Date().toISOString());
      const outcome = await store.ingest.commit(request(seeded, { sourceRevision: 1 }));
      expect((await store.signals.get(outcome.record.id))!.deliveries.map((d) => d.agentId)).toEqual([
        seeded.agents[0]!.id,
      ]);
      expect(await store.deliveries.take(stranger.agents[0]!.id, at(2000), 10)).toEqual([]);
    });

    it('counts each agent’s deliveries not yet final, agents with none included', async () => {
      const seeded = await seed(store, { agents: 2, route: [0] });
      for (let i = 0; i < 3; i++) await store.ingest.commit(request(seeded));
      const depthOf = async (agentId: string) => (await store.deliveries.countOpen()).find((d) => d.agentId === agentId)?.open;
      expect(await depthOf(seeded.agents[0]!.id)).toBe(3);
      expect(await depthOf(seeded.agents[1]!.id)).toBe(0);
      const [first] = await store.deliveries.take(seeded.agents[0]!.id, at(2000), 1);
      expect(await depthOf(seeded.agents[0]!.id)).toBe(3); // handed out, not yet acknowledged
      await store.deliveries.ack(seeded.agents[0]!.id, first!.id, { status: 'executed', message: null, result: null }, at(2001));
      expect(await depthOf(seeded.agents[0]!.id)).toBe(2);
    });

    it('numbers each agent’s deliveries 1, 2, 3… in acceptance order', async () => {
      const seeded = await seed(store, { agents: 2 });
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await store.ingest.commit(request(seeded, { receivedAt: at(1000 + i) }))).record.id);
      for (const agent of seeded.agents) {
        const taken = await store.deliveries.take(agent.id, at(2000), 10);
        expect(taken.map((d) => d.seq)).toEqual([1, 2, 3, 4, 5]);
        expect(taken.map((d) => d.id)).toEqual(ids);
      }
    });

    it('gives concurrent ingests distinct sequence numbers in the same order on every agent', async () => {
      const seeded = await seed(store, { agents: 3 });
      await Promise.all(Array.from({ length: 40 }, () => store.ingest.commit(request(seeded))));
      const orders = await Promise.all(seeded.agents.map((a) => store.deliveries.take(a.id, at(2000), 100)));
      for (const taken of orders) expect(taken.map((d) => d.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      expect(orders[1]!.map((d) => d.id)).toEqual(orders[0]!.map((d) => d.id));
      expect(orders[2]!.map((d) => d.id)).toEqual(orders[0]!.map((d) => d.id));
    });

    it('numbers each agent’s deliveries without gaps when sources routing to overlapping agents arrive at once', async () => {
      const seeded = await seed(store, { agents: 3, route: [1] });
      const [a0, a1, a2] = seeded.agents.map((a) => a.id) as [string, string, string];
      const wide = { ...seeded.source, id: `src-${randomUUID()}`, ...storedAuthKey(`key-${randomUUID()}`), agentIds: [a2, a0, a1] };
      await store.sources.create(wide);
      const onWide = { ...seeded, source: wide };
      const requests = Array.from({ length: 12 }, (_, i) => request(i % 3 === 0 ? onWide : seeded));
      const outcomes = await Promise.all(requests.map((r) => store.ingest.commit(r)));
      expect(outcomes.every((o) => o.record.status === 'accepted')).toBe(true);
      const expected = (agentId: string) =>
        requests.filter((r) => r.sourceId === wide.id || agentId === a1).map((r) => r.id);
      for (const agentId of [a0, a1, a2]) {
        const taken = await store.deliveries.take(agentId, at(2000), 100);
        expect(taken.map((d) => d.id)).toEqual(expected(agentId));
        expect(taken.map((d) => d.seq)).toEqual(expected(agentId).map((_, i) => i + 1));
      }
      // Later ingests continue the numbering.
      const next = await store.ingest.commit(request(onWide));
      const deliveries = (await store.signals.get(next.record.id))!.deliveries;
      expect(deliveries.map((d) => [d.agentId, d.seq])).toEqual(
        [a0, a1, a2].map((id) => [id, expected(id).length + 1]).sort(),
      );
    });

    it('keeps an accepted signal in the log even when no agent receives it', async () => {
      const seeded = await seed(store, { agents: 0 });
      const outcome = await store.ingest.commit(request(seeded));
      expect(outcome.record.status).toBe('accepted');
      expect((await store.signals.get(outcome.record.id))!.deliveries).toEqual([]);
    });

    it('refuses an ingest whose source is unknown or belongs to another account', async () => {
      const seeded = await seed(store);
      const other = await seed(store);
      await expect(store.ingest.commit(request(seeded, { sourceId: 'src-missing' }))).rejects.toThrow();
      await expect(store.ingest.commit(request(seeded, { accountId: other.accountId }))).rejects.toThrow();
      expect((await store.usage.get(other.accountId, PERIOD))!.used).toBe(0);
    });

    it('fails a bad request alone when it arrives together with good ones', async () => {
      const seeded = await seed(store, { quota: 10, agents: 1 });
      const other = await seed(store);
      const requests = [
        request(seeded),
        request(seeded, { sourceId: 'src-missing' }),
        request(seeded),
        request(seeded, { accountId: other.accountId }),
        request(seeded),
      ];
      // Submitted in one event-loop turn: both stores commit them together.
      const settled = await Promise.allSettled(requests.map((r) => store.ingest.commit(r)));
      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled']);
      const recorded = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
      expect(recorded.map((o) => o.kind)).toEqual(['recorded', 'recorded', 'recorded']);
      expect(recorded.map((o) => o.record.quota!.used)).toEqual([1, 2, 3]);
      expect((await store.usage.get(seeded.accountId, PERIOD))!.used).toBe(3);
      expect((await store.usage.get(other.accountId, PERIOD))!.used).toBe(0);
      expect(await store.signals.get(requests[1]!.id)).toBeNull();
      expect(await store.signals.get(requests[3]!.id)).toBeNull();
      const taken = await store.deliveries.take(seeded.agents[0]!.id, at(2000), 10);
      expect(taken.map((d) => d.id)).toEqual([requests[0]!.id, requests[2]!.id, requests[4]!.id]);
      expect(taken.map((d) => d.seq)).toEqual([1, 2, 3]);
    });

    it('keeps every agent’s order when ingests for several accounts arrive at once', async () => {
      const accounts = [await seed(store, { agents: 2 }), await seed(store, { agents: 1 }), await seed(store, { agents: 2 })];
      const requests = Array.from({ length: 30 }, (_, i) => request(accounts[(i * 7) % 3]!, { receivedAt: at(1000 + i) }));
      const outcomes = await Promise.all(requests.map((r) => store.ingest.commit(r)));
      expect(outcomes.every((o) => o.kind === 'recorded' && o.record.status === 'accepted')).toBe(true);
      for (const seeded of accounts) {
        const mine = requests.filter((r) => r.accountId === seeded.accountId).map((r) => r.id);
        expect(mine).toHaveLength(10);
        for (const agent of seeded.agents) {
          const taken = await store.deliveries.take(agent.id, at(2000), 100);
          expect(taken.map((d) => d.id)).toEqual(mine);
          expect(taken.map((d) => d.seq)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
        }
        expect((await store.usage.get(seeded.accountId, PERIOD))!.used).toBe(10);
      }
    });
  });

  describe('delivery', () => {
    it('hands out oldest first up to the limit, marks them delivered and hands them out again until acked', async () => {
      const seeded = await seed(store, { agents: 1 });
      const agentId = seeded.agents[0]!.id;
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await store.ingest.commit(request(seeded, { receivedAt: at(1000 + i) }))).record.id);

      const firstTwo = await store.deliveries.take(agentId, at(5000), 2);
      expect(firstTwo).toEqual([
        { id: ids[0], seq: 1, sourceId: seeded.source.id, receivedAt: at(1000), expiresAt: at(3_600_000), signal: BUY },
        { id: ids[1], seq: 2, sourceId: seeded.source.id, receivedAt: at(1001), expiresAt: at(3_600_000), signal: BUY },
      ]);
      expect((await store.signals.get(ids[0]!))!.deliveries[0]).toMatchObject({
        status: 'delivered',
        deliveredAt: at(5000),
        attempts: 1,
      });
      expect((await store.signals.get(ids[2]!))!.deliveries[0]).toMatchObject({ status: 'queued', attempts: 0 });

      const again = await store.deliveries.take(agentId, at(6000), 10);
      expect(again.map((d) => d.id)).toEqual(ids);
      // deliveredAt records the first hand-out; attempts counts every one.
      expect((await store.signals.get(ids[0]!))!.deliveries[0]).toMatchObject({ deliveredAt: at(5000), attempts: 2 });

      await store.deliveries.ack(agentId, ids[0]!, { status: 'executed', message: null, result: null }, at(7000));
      expect((await store.deliveries.take(agentId, at(8000), 10)).map((d) => d.id)).toEqual([ids[1], ids[2]]);
      expect(await store.deliveries.take(agentId, at(8000), 0)).toEqual([]);
    });

    it('a push session hands out each delivery once, counts an attempt only for a real hand-out, and hands out what is new', async () => {
      const seeded = await seed(store, { agents: 1 });
      const agentId = seeded.agents[0]!.id;
      const ids: string[] = [];
      for (let i = 0; i < 150; i++) ids.push((await store.ingest.commit(request(seeded, { receivedAt: at(1000 + i) }))).record.id);
      const attemptsOf = async (id: string) => (await store.signals.get(id))!.deliveries[0]!.attempts;

      const claim = (await store.deliveries.claimSession(agentId, seeded.agents[0]!.tokenHash))!;
      try {
        const first = await claim.takeDeliveries(at(5000), 100);
        expect(first.signals.map((s) => s.id)).toEqual(ids.slice(0, 100));
        expect(first.full).toBe(true);
        // Taken again without an ack (the agent is behind): nothing new fits the window,
        // nothing is handed out again, no attempt is counted.
        const second = await claim.takeDeliveries(at(6000), 100);
        expect(second).toEqual({ signals: [], full: true, revoked: false });
        expect(await attemptsOf(ids[0]!)).toBe(1);
        expect(await attemptsOf(ids[99]!)).toBe(1);
        expect((await store.signals.get(ids[100]!))!.deliveries[0]).toMatchObject({ status: 'queued', attempts: 0 });

        for (const id of ids.slice(0, 30)) {
          await store.deliveries.ack(agentId, id, { status: 'executed', message: null, result: null }, at(7000));
        }
        const third = await claim.takeDeliveries(at(8000), 100);
        expect(third.signals.map((s) => s.id)).toEqual(ids.slice(100, 130));
        expect(third.full).toBe(true);
        expect(await attemptsOf(ids[30]!)).toBe(1);
        expect(await attemptsOf(ids[100]!)).toBe(1);
      } finally {
        await claim.release();
      }

      // A new session (the agent reconnected) gets what it has not acknowledged again, counted.
      const next = (await store.deliveries.claimSession(agentId, seeded.agents[0]!.tokenHash))!;
      try {
        const again = await next.takeDeliveries(at(9000), 100);
        expect(again.signals.map((s) => s.id)).toEqual(ids.slice(30, 130));
        expect(await attemptsOf(ids[30]!)).toBe(2);
        expect(await attemptsOf(ids[130]!)).toBe(0);
      } finally {
        await next.release();
      }
    });

    it("a push session hands out nothing once its agent's token is rotated or the agent deleted", async () => {
      const seeded = await seed(store, { agents: 3 });
      const [rotated, deleted] = seeded.agents as [Agent, Agent];
      const claims = await Promise.all(seeded.agents.map(async (agent) => (await store.deliveries.claimSession(agent.id, agent.tokenHash))!));
      const [rotatedClaim, deletedClaim, keptClaim] = claims as [AgentSessionClaim, AgentSessionClaim, AgentSessionClaim];
      try {
        const first = await store.ingest.commit(request(seeded, { receivedAt: at(1000) }));
        const firstId = first.kind === 'recorded' ? first.record.id : '';
        for (const claim of claims) expect((await claim.takeDeliveries(at(2000), 10)).signals.map((s) => s.id)).toEqual([firstId]);

        expect(await store.agents.rotateToken(rotated.id, 'new-digest-' + randomUUID())).not.toBeNull();
        expect(await store.agents.delete(deleted.id)).toEqual({ kind: 'deleted' });
        // The deletion moved the source to a new revision.
        const second = await store.ingest.commit(request({ ...seeded, source: (await store.sources.get(seeded.source.id))! }, { receivedAt: at(3000) }));
        const secondId = second.kind === 'recorded' ? second.record.id : '';
        // Together, so that PostgreSQL's session connection may hand out for all three in one statement.
        const [afterRotation, afterDeletion, alongside] = await Promise.all(claims.map((claim) => claim.takeDeliveries(at(4000), 10)));
        expect(afterRotation).toEqual({ signals: [], full: false, revoked: true });
        expect(afterDeletion).toEqual({ signals: [], full: false, revoked: true });
        expect(alongside).toEqual({ signals: [expect.objectContaining({ id: secondId })], full: false, revoked: false });
        // Nothing was handed out, nor counted, on the old token.
        expect((await store.signals.get(secondId))!.deliveries.find((d) => d.agentId === rotated.id)).toMatchObject({
          status: 'queued',
          attempts: 0,
          deliveredAt: null,
        });
        expect((await keptClaim.takeDeliveries(at(5000), 10)).revoked).toBe(false);
        expect((await rotatedClaim.takeDeliveries(at(5000), 10)).revoked).toBe(true);
      } finally {
        for (const claim of [rotatedClaim, deletedClaim, keptClaim]) await claim.release();
      }
    });

    it('expires deliveries at or past expiresAt, handed out or not, and never hands them out', async () => {
      const seeded = await seed(store, { agents: 1 });
      const agentId = seeded.agents[0]!.id;
      const early = await store.ingest.commit(request(seeded, { receivedAt: at(1000), verdict: accept(BUY, at(10_000)) }));
      const late = await store.ingest.commit(request(seeded, { receivedAt: at(1001), verdict: accept(BUY, at(20_000)) }));
      const later = await store.ingest.commit(request(seeded, { receivedAt: at(1002), verdict: accept(BUY, at(30_000)) }));

      expect((await store.deliveries.take(agentId, at(15_000), 1)).map((d) => d.id)).toEqual([late.record.id]);
      // At exactly expiresAt the handed-out `late` expires too.
      expect((await store.deliveries.take(agentId, at(20_000), 10)).map((d) => d.id)).toEqual([later.record.id]);
      const [e, l] = [(await store.signals.get(early.record.id))!, (await store.signals.get(late.record.id))!];
      expect(e.deliveries[0]).toMatchObject({ status: 'expired', deliveredAt: null, attempts: 0 });
      expect(l.deliveries[0]).toMatchObject({ status: 'expired', deliveredAt: at(15_000), attempts: 1 });
    });

    it('answers each ack outcome', async () => {
      const seeded = await seed(store, { agents: 2 });
      const [agent, other] = seeded.agents.map((a) => a.id) as [string, string];
      const expiring = await store.ingest.commit(request(seeded, { receivedAt: at(1000), verdict: accept(BUY, at(10_000)) }));
      const handedOut = await store.ingest.commit(request(seeded, { receivedAt: at(1001), verdict: accept(BUY, at(10_000)) }));
      const normal = await store.ingest.commit(request(seeded, { receivedAt: at(1002) }));

      // Hand out handedOut and normal (not expiring), as the agent's poll would.
      expect((await store.deliveries.take(other, at(2000), 10)).length).toBe(3);
      await store.deliveries.take(agent, at(2000), 10);
      await store.deliveries.ack(agent, expiring.record.id, { status: 'failed', message: null, result: null }, at(2100));
      await store.deliveries.take(agent, at(10_000), 10);

      const result = { ticket: 42, price: 1.0845 };
      const acked = await store.deliveries.ack(agent, normal.record.id, { status: 'executed', message: 'filled', result }, at(11_000));
      expect(acked).toEqual({
        kind: 'acked',
        delivery: {
          signalId: normal.record.id,
          agentId: agent,
          seq: 3,
          status: 'executed',
          expiresAt: at(3_600_000),
          deliveredAt: at(2000),
          attempts: 2,
          ackedAt: at(11_000),
          message: 'filled',
          result,
          ackedAfterExpiry: false,
        },
      });
      const same = await store.deliveries.ack(agent, normal.record.id, { status: 'executed', message: 'x', result: null }, at(12_000));
      expect(same).toEqual({ kind: 'already_acked', delivery: acked.kind === 'acked' ? acked.delivery : null });
      const clash = await store.deliveries.ack(agent, normal.record.id, { status: 'rejected', message: null, result: null }, at(12_000));
      expect(clash.kind).toBe('conflict');
      expect(clash.kind === 'conflict' && clash.delivery.status).toBe('executed');

      // Handed out, then expired: the agent may have executed it, so the ack is taken.
      const lateAck = await store.deliveries.ack(agent, handedOut.record.id, { status: 'executed', message: null, result: null }, at(12_000));
      expect(lateAck.kind === 'acked' && lateAck.delivery).toMatchObject({ status: 'executed', ackedAfterExpiry: true });

      // Expired before it was ever handed out: the agent cannot have acted on it.
      const fresh = await seed(store, { agents: 1 });
      const stale = await store.ingest.commit(request(fresh, { verdict: accept(BUY, at(5000)) }));
      await store.deliveries.take(fresh.agents[0]!.id, at(6000), 10);
      const expired = await store.deliveries.ack(fresh.agents[0]!.id, stale.record.id, { status: 'executed', message: null, result: null }, at(7000));
      expect(expired.kind).toBe('expired');
      expect(expired.kind === 'expired' && expired.delivery).toMatchObject({ status: 'expired', deliveredAt: null });

      // A delivery never handed out is refused: the agent cannot have acted on it, and taking
      // the ack would settle a signal that was never delivered. It stays queued and is handed
      // out next; once past its expiresAt the refusal says it expired.
      const never = await store.ingest.commit(request(seeded, { receivedAt: at(12_500), verdict: accept(BUY, at(20_000)) }));
      const direct = await store.deliveries.ack(agent, never.record.id, { status: 'rejected', message: 'no margin', result: null }, at(13_000));
      expect(direct.kind).toBe('not_delivered');
      expect(direct.kind === 'not_delivered' && direct.delivery).toMatchObject({ status: 'queued', deliveredAt: null, ackedAt: null });
      expect((await store.signals.get(never.record.id))!.deliveries.find((d) => d.agentId === agent)).toMatchObject({
        status: 'queued',
        ackedAt: null,
        message: null,
      });
      const tooLate = await store.deliveries.ack(agent, never.record.id, { status: 'executed', message: null, result: null }, at(20_000));
      expect(tooLate.kind).toBe('expired');
      expect((await store.deliveries.take(agent, at(19_000), 10)).map((d) => d.id)).toEqual([never.record.id]);

      expect(await store.deliveries.ack(agent, 'sig-missing', { status: 'executed', message: null, result: null }, at(1))).toEqual({
        kind: 'not_found',
      });
      const stranger = await seed(store, { agents: 1 });
      expect(
        await store.deliveries.ack(stranger.agents[0]!.id, normal.record.id, { status: 'executed', message: null, result: null }, at(1)),
      ).toEqual({ kind: 'not_found' });
      // The failed ack of `expiring` stands.
      expect((await store.signals.get(expiring.record.id))!.deliveries.find((d) => d.agentId === agent)).toMatchObject({
        status: 'failed',
        ackedAt: at(2100),
      });
    });

    it('says when an acknowledgement came at or after expiresAt, whether or not a poll marked the delivery expired', async () => {
      const seeded = await seed(store, { agents: 1 });
      const agent = seeded.agents[0]!.id;
      const marked = await store.ingest.commit(request(seeded, { receivedAt: at(1000), verdict: accept(BUY, at(10_000)) }));
      const inTime = await store.ingest.commit(request(seeded, { receivedAt: at(1002), verdict: accept(BUY, at(10_000)) }));
      await store.deliveries.take(agent, at(2000), 10);
      const early = await store.deliveries.ack(agent, inTime.record.id, { status: 'executed', message: null, result: null }, at(9999));
      expect(early.kind === 'acked' && early.delivery.ackedAfterExpiry).toBe(false);
      expect(await store.deliveries.take(agent, at(10_000), 10)).toEqual([]);
      const late = await store.deliveries.ack(agent, marked.record.id, { status: 'failed', message: null, result: null }, at(11_000));
      expect(late.kind === 'acked' && late.delivery).toMatchObject({ status: 'failed', ackedAfterExpiry: true });
      expect((await store.signals.get(marked.record.id))!.deliveries[0]).toMatchObject({ status: 'failed', ackedAfterExpiry: true });
      expect((await store.signals.get(inTime.record.id))!.deliveries[0]).toMatchObject({ status: 'executed', ackedAfterExpiry: false });

      // Not polled since it expired: still `delivered` in the store, but past its time all the same.
      const other = await seed(store, { agents: 1 });
      const lazy = await store.ingest.commit(request(other, { receivedAt: at(1000), verdict: accept(BUY, at(10_000)) }));
      await store.deliveries.take(other.agents[0]!.id, at(2000), 10);
      const atExpiry = await store.deliveries.ack(other.agents[0]!.id, lazy.record.id, { status: 'executed', message: null, result: null }, at(10_000));
      expect(atExpiry.kind === 'acked' && atExpiry.delivery).toMatchObject({ status: 'executed', ackedAfterExpiry: true });
      // Answered again as it stands.
      const again = await store.deliveries.ack(other.agents[0]!.id, lazy.record.id, { status: 'executed', message: null, result: null }, at(12_000));
      expect(again).toEqual({ kind: 'already_acked', delivery: atExpiry.kind === 'acked' ? atExpiry.delivery : null });
    });

    it("moves the expiry of a source's unacknowledged deliveries when its maxSignalAgeSeconds changes", async () => {
      const seeded = await seed(store, { agents: 2 });
      const otherSource = { ...seeded.source, id: `src-${randomUUID()}`, ...storedAuthKey(`key-${randomUUID()}`) };
      await store.sources.create(otherSource);
      const [agent, second] = seeded.agents.map((a) => a.id) as [string, string];
      const acked = await store.ingest.commit(request(seeded, { receivedAt: at(1000) }));
      const handedOut = await store.ingest.commit(request(seeded, { receivedAt: at(1001) }));
      for (const id of [agent, second]) await store.deliveries.take(id, at(2000), 10);
      await store.deliveries.ack(agent, acked.record.id, { status: 'executed', message: null, result: null }, at(2500));
      const queued = await store.ingest.commit(request(seeded, { receivedAt: at(3000) }));
      const expired = await store.ingest.commit(request(seeded, { receivedAt: at(3001), verdict: accept(BUY, at(4000)) }));
      // Polls that hand out nothing still mark what expired.
      for (const id of [agent, second]) expect(await store.deliveries.take(id, at(5000), 0)).toEqual([]);
      const elsewhere = await store.ingest.commit(request(seeded, { sourceId: otherSource.id, receivedAt: at(3002) }));

      expect((await store.sources.update(seeded.source.id, { maxSignalAgeSeconds: 30 }, at(5000)))!.maxSignalAgeSeconds).toBe(30);
      const expiries = async (id: string) => (await store.signals.get(id))!.deliveries.map((d) => [d.agentId, d.status, d.expiresAt]);
      const byAgent = (rows: Record<string, [string, string]>) =>
        Object.keys(rows)
          .sort()
          .map((id) => [id, ...rows[id]!]);
      const both = (status: string, expiresAt: string) => byAgent({ [agent]: [status, expiresAt], [second]: [status, expiresAt] });
      // The acknowledged one keeps its expiry; the others are received + 30 s, for every agent.
      expect(await expiries(acked.record.id)).toEqual(
        byAgent({ [agent]: ['executed', at(3_600_000)], [second]: ['delivered', at(31_000)] }),
      );
      expect(await expiries(handedOut.record.id)).toEqual(both('delivered', at(31_001)));
      expect(await expiries(queued.record.id)).toEqual(both('queued', at(33_000)));
      // Marked expired is final; another source's deliveries are not touched.
      expect(await expiries(expired.record.id)).toEqual(both('expired', at(4000)));
      expect(await expiries(elsewhere.record.id)).toEqual(both('queued', at(3_600_000)));

      expect((await store.deliveries.take(agent, at(31_001), 10)).map((d) => [d.id, d.expiresAt])).toEqual([
        [queued.record.id, at(33_000)],
        [elsewhere.record.id, at(3_600_000)],
      ]);
      // A patch that leaves the age alone leaves the expiries alone.
      await store.sources.update(seeded.source.id, { name: 'Renamed' }, new Date().toISOString());
      expect(await expiries(queued.record.id)).toEqual(byAgent({ [agent]: ['delivered', at(33_000)], [second]: ['queued', at(33_000)] }));
    });

    it('never revives a delivery already past its deadline when the age is raised, marked expired or not', async () => {
      const seeded = await seed(store, { agents: 1 });
      const agent = seeded.agents[0]!.id;
      // Due at 4 s; no poll or sweep has marked it expired when the age is raised at 5 s.
      const overdue = await store.ingest.commit(request(seeded, { receivedAt: at(1000), verdict: accept(BUY, at(4000)) }));
      // Due at 6 s: still ahead at the raise, so it takes the longer life.
      const pending = await store.ingest.commit(request(seeded, { receivedAt: at(3000), verdict: accept(BUY, at(6000)) }));
      await store.sources.update(seeded.source.id, { maxSignalAgeSeconds: 3600 }, at(5000));
      const [o] = (await store.signals.get(overdue.record.id))!.deliveries;
      expect(o).toMatchObject({ status: 'queued', expiresAt: at(4000) });
      expect((await store.deliveries.take(agent, at(5001), 10)).map((d) => [d.id, d.expiresAt])).toEqual([[pending.record.id, at(3_603_000)]]);
      expect((await store.signals.get(overdue.record.id))!.deliveries[0]).toMatchObject({ status: 'expired', expiresAt: at(4000) });
    });

    it('takes exactly one of two racing acks with different statuses', async () => {
      const seeded = await seed(store, { agents: 1 });
      const agentId = seeded.agents[0]!.id;
      const { record } = await store.ingest.commit(request(seeded));
      await store.deliveries.take(agentId, at(2000), 10);
      const outcomes = await Promise.all([
        store.deliveries.ack(agentId, record.id, { status: 'executed', message: null, result: null }, at(3000)),
        store.deliveries.ack(agentId, record.id, { status: 'failed', message: null, result: null }, at(3000)),
      ]);
      expect(outcomes.map((o) => o.kind).sort()).toEqual(['acked', 'conflict']);
    });
  });

  describe('signal log', () => {
    it('lists newest first, pages with a cursor and filters by source and status', async () => {
      const a = await seed(store, { quota: 1000 });
      const b = await seed(store, { quota: 1000 });
      const reject = { kind: 'reject' as const, httpStatus: 422, problems: [{ code: 'MISSING_ACTION' as const, detail: 'x' }] };
      const made: { id: string; source: string; status: string }[] = [];
      for (let i = 0; i < 12; i++) {
        const seeded = i % 3 === 0 ? b : a;
        // Two signals share each receivedAt so the id decides their order.
        const r = request(seeded, {
          id: `sig-${String(i).padStart(2, '0')}-${randomUUID()}`,
          receivedAt: at(500_000 + Math.floor(i / 2)),
          verdict: i % 4 === 1 ? reject : accept(),
        });
        const outcome = await store.ingest.commit(r);
        made.push({ id: r.id, source: seeded.source.id, status: outcome.record.status });
      }
      const newestFirst = [...made].reverse();
      const ofA = newestFirst.filter((m) => m.source === a.source.id);

      const page1 = await store.signals.list({ sourceId: a.source.id, limit: 3 });
      expect(page1.signals.map((s) => s.id)).toEqual(ofA.slice(0, 3).map((m) => m.id));
      expect(page1.next).toBe(page1.signals[2]!.id);
      const page2 = await store.signals.list({ sourceId: a.source.id, limit: 3, before: page1.next! });
      expect(page2.signals.map((s) => s.id)).toEqual(ofA.slice(3, 6).map((m) => m.id));
      expect(page2.next).toBe(page2.signals[2]!.id);
      const page3 = await store.signals.list({ sourceId: a.source.id, limit: 3, before: page2.next! });
      expect(page3.signals.map((s) => s.id)).toEqual(ofA.slice(6, 9).map((m) => m.id));
      expect(page3.next).toBeNull();
      expect(ofA).toHaveLength(8);
      // A last page that is exactly full has no next page either.
      expect(await store.signals.list({ sourceId: a.source.id, limit: 2, before: page2.next! })).toEqual({
        signals: page3.signals,
        next: null,
      });
      expect((await store.signals.list({ sourceId: a.source.id, limit: 8 })).next).toBeNull();
      expect((await store.signals.list({ sourceId: a.source.id, limit: 7 })).next).toBe(ofA[6]!.id);

      const rejectedOfA = (await store.signals.list({ sourceId: a.source.id, status: 'rejected', limit: 10 })).signals;
      expect(rejectedOfA.map((s) => s.id)).toEqual(ofA.filter((m) => m.status === 'rejected').map((m) => m.id));
      expect(rejectedOfA.length).toBeGreaterThan(0);

      const ofB = (await store.signals.list({ sourceId: b.source.id, limit: 10 })).signals;
      expect(ofB.map((s) => s.id)).toEqual(newestFirst.filter((m) => m.source === b.source.id).map((m) => m.id));

      expect((await store.signals.list({ limit: 10, before: 'sig-unknown' })).signals).toEqual([]);
      // Without a source filter the log spans sources (and earlier tests' signals).
      const everything = (await store.signals.list({ limit: 1000 })).signals;
      const positions = made.map((m) => everything.findIndex((s) => s.id === m.id));
      expect(positions.every((p) => p >= 0)).toBe(true);
      expect([...positions].sort((x, y) => y - x)).toEqual(positions);
      expect(await store.signals.get('sig-unknown')).toBeNull();
    });
  });

  describe('outcomes', () => {
    const SELL: NormalizedSignal = { symbol: 'GBPUSD', action: 'sell', volume: { type: 'lots', value: 0.2 } };
    const ok = (status: 'executed' | 'rejected' | 'failed', message: string | null = null) => ({ status, message, result: null });

    it('counts each signal\'s deliveries by status, on the list, the detail and a replay; {} with no agent, null when rejected', async () => {
      const seeded = await seed(store, { quota: 1000, agents: 2 });
      const [one, two] = seeded.agents.map((agent) => agent.id).sort() as [string, string];
      const first = await store.ingest.commit(request(seeded, { receivedAt: at(600_000), idempotencyKey: 'o1', requestHash: 'h', verdict: accept(BUY, at(600_030)) }));
      expect(first.record.outcome).toEqual({ queued: 2 });
      // Agent one takes and executes it; agent two comes back after its deadline.
      expect((await store.deliveries.take(one, at(600_010), 10)).map((d) => d.id)).toEqual([first.record.id]);
      await store.deliveries.ack(one, first.record.id, ok('executed', 'filled at 1.1'), at(600_011));
      const expired: ExpiredDelivery[] = [];
      const stop = store.deliveries.watchExpiries((found) => expired.push(...found));
      expect(await store.deliveries.take(two, at(600_045), 10)).toEqual([]);
      stop();
      expect(expired).toEqual([
        { signalId: first.record.id, agentId: two, receivedAt: at(600_000), expiresAt: at(600_030), expiredAt: at(600_045) },
      ]);

      const detail = await store.signals.get(first.record.id);
      expect(detail!.outcome).toEqual({ executed: 1, expired: 1 });
      expect(detail!.deliveries.map((d) => [d.agentId, d.status, d.attempts, d.message])).toEqual([
        [one, 'executed', 1, 'filled at 1.1'],
        [two, 'expired', 0, null],
      ]);
      const listed = (await store.signals.list({ sourceId: seeded.source.id, limit: 10 })).signals;
      expect(listed.map((s) => s.outcome)).toEqual([{ executed: 1, expired: 1 }]);
      const replay = await store.ingest.commit(request(seeded, { receivedAt: at(600_050), idempotencyKey: 'o1', requestHash: 'h' }));
      expect(replay).toMatchObject({ kind: 'replay', record: { id: first.record.id, outcome: { executed: 1, expired: 1 } } });

      const nobody = await seed(store, { quota: 1000, agents: 0 });
      const lonely = await store.ingest.commit(request(nobody));
      expect(lonely.record.outcome).toEqual({});
      expect((await store.signals.get(lonely.record.id))!.outcome).toEqual({});
      const refused = await store.ingest.commit(request(nobody, { receivedAt: at(2000), verdict: { kind: 'reject', httpStatus: 422, problems: [{ code: 'MISSING_ACTION', detail: 'x' }] } }));
      expect(refused.record.outcome).toBeNull();
      expect((await store.signals.list({ sourceId: nobody.source.id, limit: 10 })).signals.map((s) => s.outcome)).toEqual([null, {}]);
    });

    it('filters by outcome, symbol and status, alone and together, paging in log order', async () => {
      const seeded = await seed(store, { quota: 1000, agents: 2 });
      const [one, two] = seeded.agents.map((agent) => agent.id).sort() as [string, string];
      const made: { id: string; symbol: string; outcome: string[] }[] = [];
      for (let i = 0; i < 9; i++) {
        const signal = i % 2 === 0 ? BUY : SELL;
        const r = request(seeded, { id: `sig-o${i}-${randomUUID()}`, receivedAt: at(700_000 + i), verdict: accept(signal, at(800_000)) });
        await store.ingest.commit(r);
        made.push({ id: r.id, symbol: signal.symbol, outcome: [] });
      }
      // Both agents take everything; agent one executes signals 0-5, rejects 6-8; agent two
      // executes 0-2 and rejects 3, leaving the rest delivered.
      await store.deliveries.take(one, at(710_000), 100);
      await store.deliveries.take(two, at(710_000), 100);
      for (const [i, m] of made.entries()) {
        await store.deliveries.ack(one, m.id, ok(i < 6 ? 'executed' : 'rejected', 'x'), at(720_000));
        if (i < 3) await store.deliveries.ack(two, m.id, ok('executed'), at(720_000));
        if (i === 3) await store.deliveries.ack(two, m.id, ok('rejected', 'no margin'), at(720_000));
      }
      await store.ingest.commit(request(seeded, { receivedAt: at(700_100), verdict: { kind: 'reject', httpStatus: 422, problems: [{ code: 'MISSING_ACTION', detail: 'x' }] } }));
      const ids = (filter: Partial<SignalFilter>) =>
        store.signals.list({ sourceId: seeded.source.id, limit: 100, ...filter }).then((page) => page.signals.map((s) => s.id));
      const newest = (pick: (i: number) => boolean) => made.filter((_, i) => pick(i)).map((m) => m.id).reverse();

      expect(await ids({ outcome: 'executed' })).toEqual(newest((i) => i < 6));
      expect(await ids({ outcome: 'rejected' })).toEqual(newest((i) => i === 3 || i >= 6));
      expect(await ids({ outcome: 'delivered' })).toEqual(newest((i) => i >= 4));
      expect(await ids({ outcome: 'failed' })).toEqual([]);
      expect(await ids({ outcome: 'rejected', symbol: 'EURUSD' })).toEqual(newest((i) => i >= 6 && i % 2 === 0));
      expect(await ids({ symbol: 'GBPUSD' })).toEqual(newest((i) => i % 2 === 1));
      expect(await ids({ symbol: 'USDJPY' })).toEqual([]);
      expect(await ids({ status: 'accepted' })).toEqual(newest(() => true));
      expect((await store.signals.list({ sourceId: seeded.source.id, status: 'rejected', limit: 100 })).signals).toHaveLength(1);
      expect(await ids({ outcome: 'executed', status: 'rejected' })).toEqual([]);
      // A symbol with an outcome across every source (the other tests' signals left out): each
      // signal once, though 0 and 2 have two executed deliveries.
      const mine = new Set(made.map((m) => m.id));
      const everySource = async (filter: Partial<SignalFilter>) =>
        (await store.signals.list({ limit: 500, ...filter })).signals.map((s) => s.id).filter((id) => mine.has(id));
      expect(await everySource({ outcome: 'executed', symbol: 'EURUSD' })).toEqual(newest((i) => i < 6 && i % 2 === 0));
      expect(await everySource({ outcome: 'rejected', symbol: 'GBPUSD' })).toEqual(newest((i) => (i === 3 || i >= 6) && i % 2 === 1));

      // Paging with the outcome filter: a signal with two executed deliveries is listed once.
      const executed = newest((i) => i < 6);
      const page1 = await store.signals.list({ sourceId: seeded.source.id, outcome: 'executed', limit: 4 });
      expect(page1.signals.map((s) => s.id)).toEqual(executed.slice(0, 4));
      expect(page1.signals.map((s) => s.outcome)).toEqual([{ executed: 1, delivered: 1 }, { executed: 1, delivered: 1 }, { executed: 1, rejected: 1 }, { executed: 2 }]);
      const page2 = await store.signals.list({ sourceId: seeded.source.id, outcome: 'executed', limit: 4, before: page1.next! });
      expect(page2.signals.map((s) => s.id)).toEqual(executed.slice(4));
      expect(page2.next).toBeNull();
    });
  });

  describe('duplicate guard', () => {
    const digest = (body: string) => createHash('sha256').update(body).digest('hex');
    const guarded = (seeded: Seeded, receivedMs: number, body = 'EURUSD,buy,vol=0.1', window = 60_000): IngestRequest =>
      request(seeded, {
        receivedAt: at(receivedMs),
        rawBody: body,
        duplicateCheck: { bodyDigest: digest(body), since: at(receivedMs - window) },
      });

    it('logs a repeated body within the window as a duplicate of the first: answered as it, neither charged nor delivered', async () => {
      const seeded = await seed(store, { quota: 1000, agents: 1 });
      const first = await store.ingest.commit(guarded(seeded, 900_000));
      expect(first.kind).toBe('recorded');
      const again = await store.ingest.commit(guarded(seeded, 930_000));
      expect(again.kind).toBe('duplicate');
      if (again.kind !== 'duplicate') return;
      expect(again.original).toEqual(first.record);
      expect(again.record).toMatchObject({ status: 'duplicate', httpStatus: 202, duplicateOf: first.record.id, quota: null, outcome: null, signal: BUY });
      expect(await store.signals.get(again.record.id)).toEqual({ ...again.record, deliveries: [] });
      expect((await store.usage.get(seeded.accountId, PERIOD))!.used).toBe(1);
      expect((await store.deliveries.take(seeded.agents[0]!.id, at(931_000), 10)).map((d) => d.id)).toEqual([first.record.id]);
      const statuses = async (status: SignalStatus) =>
        (await store.signals.list({ sourceId: seeded.source.id, status, limit: 10 })).signals.map((s) => s.id);
      expect(await statuses('duplicate')).toEqual([again.record.id]);
      expect(await statuses('accepted')).toEqual([first.record.id]);

      // Another body is a new signal; the same body past the window is one too, and starts a new window.
      expect((await store.ingest.commit(guarded(seeded, 935_000, 'EURUSD,sell,vol=0.1'))).kind).toBe('recorded');
      const later = await store.ingest.commit(guarded(seeded, 961_000));
      expect(later.kind).toBe('recorded');
      expect(await store.ingest.commit(guarded(seeded, 962_000))).toMatchObject({ kind: 'duplicate', original: { id: later.record.id } });
      // Without the check (guard off) the same body is a new signal.
      expect((await store.ingest.commit(request(seeded, { receivedAt: at(963_000) }))).kind).toBe('recorded');
    });

    it('compares with the source\'s previous accepted signal only; a request that cannot be a repeat (since null) is never held back, and is what the next compares with', async () => {
      const seeded = await seed(store, { quota: 1000 });
      const close = (receivedMs: number): IngestRequest =>
        request(seeded, { receivedAt: at(receivedMs), rawBody: 'EURUSD,closeall', duplicateCheck: { bodyDigest: digest('EURUSD,closeall'), since: null } });
      const kinds: string[] = [];
      for (const next of [guarded(seeded, 1_050_000), close(1_050_001), close(1_050_002), guarded(seeded, 1_050_003), close(1_050_004), guarded(seeded, 1_050_005), guarded(seeded, 1_050_006)]) {
        kinds.push((await store.ingest.commit(next)).kind);
      }
      expect(kinds).toEqual(['recorded', 'recorded', 'recorded', 'recorded', 'recorded', 'recorded', 'duplicate']);
    });

    it('compares only with signals accepted on the same source', async () => {
      const a = await seed(store, { quota: 1 });
      const b = await seed(store, { quota: 1000 });
      expect((await store.ingest.commit(guarded(a, 1_000_000))).record.status).toBe('accepted');
      // The quota refusal is not an accepted signal: no duplicate of it.
      const refused = await store.ingest.commit(guarded(a, 1_000_001, 'EURUSD,sell'));
      expect(refused.record).toMatchObject({ status: 'rejected', httpStatus: 429 });
      expect((await store.ingest.commit(guarded(b, 1_000_002, 'EURUSD,sell'))).kind).toBe('recorded');
      expect((await store.ingest.commit(guarded(b, 1_000_003))).kind).toBe('recorded');
    });

    it('binds an Idempotency-Key sent with a duplicate to the original', async () => {
      const seeded = await seed(store, { quota: 1000 });
      const first = await store.ingest.commit(guarded(seeded, 1_100_000));
      const keyed = { ...guarded(seeded, 1_100_010), idempotencyKey: 'dk', requestHash: 'dh' };
      expect((await store.ingest.commit(keyed)).kind).toBe('duplicate');
      const retry = await store.ingest.commit({ ...guarded(seeded, 1_100_020), idempotencyKey: 'dk', requestHash: 'dh' });
      expect(retry).toMatchObject({ kind: 'replay', record: { id: first.record.id } });
    });

    it('logs a repeated body as a duplicate of an earlier request of the same turn, between plain, keyed and rejected ones', async () => {
      const seeded = await seed(store, { quota: 1000, agents: 1 });
      const requests = [
        guarded(seeded, 1_200_000),
        request(seeded, { receivedAt: at(1_200_001) }),
        request(seeded, { receivedAt: at(1_200_002), idempotencyKey: 'turn', requestHash: 'th' }),
        request(seeded, { receivedAt: at(1_200_003), verdict: { kind: 'reject', httpStatus: 422, problems: [QUOTA_PROBLEM] } }),
        guarded(seeded, 1_200_004),
        request(seeded, { receivedAt: at(1_200_005) }),
      ];
      // Submitted in one event-loop turn: one batch on both stores.
      const outcomes = await Promise.all(requests.map((r) => store.ingest.commit(r)));
      expect(outcomes.map((o) => o.kind)).toEqual(['recorded', 'recorded', 'recorded', 'recorded', 'duplicate', 'recorded']);
      // The original as stored, its delivery counted.
      expect(outcomes[4]).toMatchObject({ original: { id: requests[0]!.id, outcome: { queued: 1 } } });
      expect(outcomes.map((o) => o.record.quota?.used ?? null)).toEqual([1, 2, 3, null, null, 4]);
      for (const i of [0, 1, 2, 3, 5]) {
        const { deliveries: _d, ...stored } = (await store.signals.get(requests[i]!.id))!;
        expect(stored).toEqual(outcomes[i]!.record);
      }
      const taken = await store.deliveries.take(seeded.agents[0]!.id, at(1_300_000), 10);
      expect(taken.map((d) => [d.id, d.seq])).toEqual([0, 1, 2, 5].map((i, k) => [requests[i]!.id, k + 1]));
      expect((await store.usage.get(seeded.accountId, PERIOD))!.used).toBe(4);
    });

    it('accepts one of many identical requests racing from two store instances', async () => {
      const seeded = await seed(store, { quota: 1000, agents: 1 });
      const other = await harness.open();
      try {
        const outcomes = await Promise.all(
          Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? store : other).ingest.commit(guarded(seeded, 1_200_000 + (i % 3)))),
        );
        const recorded = outcomes.filter((o) => o.kind === 'recorded');
        expect(recorded).toHaveLength(1);
        expect(outcomes.filter((o) => o.kind === 'duplicate').every((o) => o.kind === 'duplicate' && o.original.id === recorded[0]!.record.id)).toBe(true);
        expect((await store.usage.get(seeded.accountId, PERIOD))!.used).toBe(1);
        expect(await store.deliveries.take(seeded.agents[0]!.id, at(1_200_500), 100)).toHaveLength(1);
      } finally {
        await other.close();
      }
    });
  });

  describe('watchDeliveries', () => {
    it('tells listeners which agents got deliveries, after the commit, until unsubscribed', async () => {
      const seeded = await seed(store, { agents: 2, route: [1] });
      const routed = seeded.agents[1]!.id;
      // A second instance has its own connection, so it sees only committed data.
      const observer = await harness.open();
      const first = request(seeded);
      const heard: string[][] = [];
      let seenInListener: Promise<number | undefined> | null = null;
      const stop = store.deliveries.watch((agentIds) => {
        if (!agentIds.includes(routed)) return;
        heard.push(agentIds);
        // The query starts synchronously, inside the listener call.
        seenInListener ??= observer.signals.get(first.id).then((s) => s?.deliveries.length);
      });
      try {
        await store.ingest.commit(first);
        await expect.poll(() => heard.length).toBe(1);
        expect(heard[0]).toEqual([routed]);
        expect(await seenInListener).toBe(1);
      } finally {
        await observer.close();
      }

      // A refused request queues nothing and tells nobody.
      await store.ingest.commit(request(seeded, { verdict: { kind: 'reject', httpStatus: 422, problems: [{ code: 'MISSING_SYMBOL', detail: 'x' }] } }));
      stop();
      await store.ingest.commit(request(seeded));
      // Wait for a second, still-subscribed listener to hear the last ingest before judging the first.
      const later = new Promise<void>((resolve) => {
        const stopLater = store.deliveries.watch((ids) => {
          if (ids.includes(routed)) {
            stopLater();
            resolve();
          }
        });
        void store.ingest.commit(request(seeded));
      });
      await later;
      expect(heard).toHaveLength(1);
    });
  });
  describe('lists, deletion, token rotation, daily counts, dashboard sessions', () => {
    it('lists accounts newest first (createdAt, then id), a page at a time', async () => {
      // Later than every other test's accounts, so they come first in the list of all.
      const ids = ['acc-list-a', 'acc-list-b', 'acc-list-c', 'acc-list-d'].map((id) => `${id}-${randomUUID()}`);
      const created = [at(9e11), at(9e11), at(9e11 + 1), at(9e11 + 2)];
      for (const [i, id] of ids.entries()) await store.accounts.create({ id, name: id, monthlySignalQuota: 5, createdAt: created[i]! });
      // Two share a createdAt: the id decides.
      const sameTime = [ids[0]!, ids[1]!].sort().reverse();
      const newestFirst = [ids[3]!, ids[2]!, ...sameTime];
      const page1 = await store.accounts.list({ limit: 3 });
      expect(page1.items.map((a) => a.id)).toEqual(newestFirst.slice(0, 3));
      expect(page1.items[0]).toEqual({ id: ids[3], name: ids[3], monthlySignalQuota: 5, createdAt: created[3] });
      expect(page1.next).toBe(newestFirst[2]);
      const page2 = await store.accounts.list({ limit: 1, before: page1.next! });
      expect(page2.items.map((a) => a.id)).toEqual([newestFirst[3]]);
      expect((await store.accounts.list({ limit: 4 })).next).toBe(newestFirst[3]);
      expect(await store.accounts.list({ limit: 3, before: 'acc-unknown' })).toEqual({ items: [], next: null });
    });

    it("lists sources and agents of one account or all, newest first, a page at a time", async () => {
      const seeded = await seed(store, { agents: 3 });
      const second = { ...seeded.source, id: `src-2-${randomUUID()}`, ...storedAuthKey(`key-${randomUUID()}`), createdAt: at(10) };
      await store.sources.create(second);
      const sources = await store.sources.list({ accountId: seeded.accountId, limit: 1 });
      expect(sources.items).toEqual([second]);
      expect(sources.next).toBe(second.id);
      expect(await store.sources.list({ accountId: seeded.accountId, limit: 5, before: second.id })).toEqual({ items: [seeded.source], next: null });
      expect(await store.sources.list({ accountId: 'no-such-account', limit: 5 })).toEqual({ items: [], next: null });
      expect((await store.sources.list({ limit: 1000 })).items.map((s) => s.id)).toEqual(expect.arrayContaining([second.id, seeded.source.id]));

      // An agent as the list reads it: no token digest, the state as its JSON text (none yet).
      const entry = ({ tokenHash: _, state: __, ...agent }: Agent) => ({ ...agent, stateJson: null });
      const agents = await store.agents.list({ accountId: seeded.accountId, limit: 2 });
      expect(agents.items).toEqual([entry(seeded.agents[2]!), entry(seeded.agents[1]!)]);
      expect(agents.next).toBe(seeded.agents[1]!.id);
      expect(await store.agents.list({ accountId: seeded.accountId, limit: 2, before: agents.next! })).toEqual({ items: [entry(seeded.agents[0]!)], next: null });
      expect((await store.agents.list({ limit: 1000 })).items.map((a) => a.id)).toEqual(expect.arrayContaining(seeded.agents.map((a) => a.id)));
    });

    it("counts an account's signals per UTC day, accepted and rejected apart, within the days asked", async () => {
      const seeded = await seed(store, { quota: 1000 });
      const other = await seed(store, { quota: 1000 });
      const reject = { kind: 'reject' as const, httpStatus: 422, problems: [{ code: 'MISSING_ACTION' as const, detail: 'x' }] };
      const day = 86_400_000;
      // T0 is 12:00 UTC: -12 h is the day's first millisecond, +12 h - 1 its last.
      const times = [-12 * 3600_000, 12 * 3600_000 - 1, day, day, 3 * day];
      for (const [i, t] of times.entries()) {
        await store.ingest.commit(request(seeded, { receivedAt: at(t), verdict: i === 1 || i === 3 ? reject : accept() }));
      }
      await store.ingest.commit(request(other, { receivedAt: at(0) }));
      const d = (offset: number) => at(offset * day).slice(0, 10);
      expect(await store.signals.countPerDay(seeded.accountId, d(0), d(2))).toEqual([
        { day: d(0), accepted: 1, rejected: 1 },
        { day: d(1), accepted: 1, rejected: 1 },
      ]);
      expect(await store.signals.countPerDay(seeded.accountId, d(3), d(3))).toEqual([{ day: d(3), accepted: 1, rejected: 0 }]);
      expect(await store.signals.countPerDay(seeded.accountId, d(-5), d(-1))).toEqual([]);
    });

    it('keeps the per-day counts equal to the log: batches, key reuse, duplicates, quota refusals, pruning and a removed source', async () => {
      const seeded = await seed(store, { quota: 5, agents: 0 });
      const other = await seed(store, { quota: 5, agents: 0 });
      const reject = { kind: 'reject' as const, httpStatus: 422, problems: [{ code: 'MISSING_ACTION' as const, detail: 'x' }] };
      const day = 86_400_000;
      const d = (offset: number) => at(offset * day).slice(0, 10);
      const digest = createHash('sha256').update('EURUSD,buy,vol=0.1').digest('hex');
      // Day 0: an accepted entry holding a key, the key reused (a rejection), then one batch of
      // three accepts and a rejection.
      expect((await store.ingest.commit(request(seeded, { receivedAt: at(0), idempotencyKey: 'k', requestHash: 'a' }))).kind).toBe('recorded');
      expect((await store.ingest.commit(request(seeded, { receivedAt: at(1), idempotencyKey: 'k', requestHash: 'b' }))).kind).toBe('key_reused');
      await Promise.all([
        ...[2, 3, 4].map((t) => store.ingest.commit(request(seeded, { receivedAt: at(t) }))),
        store.ingest.commit(request(seeded, { receivedAt: at(5), verdict: reject })),
        store.ingest.commit(request(other, { receivedAt: at(6) })),
      ]);
      // Day 1: an accept, its duplicate (neither), and a quota refusal (the quota of 5 is used up).
      const guard = { bodyDigest: digest, since: at(day - 60_000) };
      expect((await store.ingest.commit(request(seeded, { receivedAt: at(day), duplicateCheck: guard }))).kind).toBe('recorded');
      expect((await store.ingest.commit(request(seeded, { receivedAt: at(day + 1), duplicateCheck: guard }))).kind).toBe('duplicate');
      const refused = await store.ingest.commit(request(seeded, { receivedAt: at(day + 2) }));
      expect(refused.kind === 'recorded' && refused.record.httpStatus).toBe(429);
      expect(await store.signals.countPerDay(seeded.accountId, d(0), d(1))).toEqual([
        { day: d(0), accepted: 4, rejected: 2 },
        { day: d(1), accepted: 1, rejected: 1 },
      ]);
      expect(await store.signals.countPerDay(other.accountId, d(0), d(1))).toEqual([{ day: d(0), accepted: 1, rejected: 0 }]);

      // Retention takes day 0 but the entry its key still holds; then that one too.
      await store.retention.pruneSignals(at(day), 1000);
      expect(await store.signals.countPerDay(seeded.accountId, d(0), d(1))).toEqual([
        { day: d(0), accepted: 1, rejected: 0 },
        { day: d(1), accepted: 1, rejected: 1 },
      ]);
      expect(await store.signals.countPerDay(other.accountId, d(0), d(1))).toEqual([]);
      await store.retention.pruneIdempotencyKeys(at(day), 1000);
      await store.retention.pruneSignals(at(day), 1000);
      expect(await store.signals.countPerDay(seeded.accountId, d(0), d(1))).toEqual([{ day: d(1), accepted: 1, rejected: 1 }]);

      // A second source's rejection stays when the first source goes with its log.
      const second = { ...seeded.source, id: `src-2-${randomUUID()}`, ...storedAuthKey(`key-${randomUUID()}`) };
      await store.sources.create(second);
      await store.ingest.commit(request({ ...seeded, source: second }, { receivedAt: at(day + 3), verdict: reject }));
      expect(await store.sources.delete(seeded.source.id)).toBe(true);
      expect(await store.signals.countPerDay(seeded.accountId, d(0), d(1))).toEqual([{ day: d(1), accepted: 0, rejected: 1 }]);
    });

    it('rotates an agent token: the old digest finds nothing from then on, and its watchers are woken', async () => {
      const seeded = await seed(store, { agents: 1 });
      const agent = seeded.agents[0]!;
      const woken: string[][] = [];
      const stop = store.deliveries.watch((ids) => woken.push(ids));
      try {
        expect((await store.agents.findByTokenHash(agent.tokenHash))!.id).toBe(agent.id);
        const rotated = await store.agents.rotateToken(agent.id, 'new-digest-' + randomUUID());
        expect(rotated).toEqual({ ...agent, tokenHash: rotated!.tokenHash });
        expect(await store.agents.findByTokenHash(agent.tokenHash)).toBeNull();
        expect(await store.agents.findByTokenHash(rotated!.tokenHash)).toEqual({
          id: agent.id,
          accountId: agent.accountId,
          name: agent.name,
          tokenHash: rotated!.tokenHash,
        });
        await expect.poll(() => woken.some((ids) => ids.includes(agent.id))).toBe(true);
      } finally {
        stop();
      }
      expect(await store.agents.rotateToken('no-such-agent', 'x')).toBeNull();
    });

    it('deletes an agent with its deliveries, never handing them out, unless a source routes to it by id', async () => {
      const seeded = await seed(store, { agents: 2, route: [0] });
      const everyAgent = { ...seeded.source, id: `src-all-${randomUUID()}`, ...storedAuthKey(`key-${randomUUID()}`), agentIds: [] };
      await store.sources.create(everyAgent);
      const [routed, other] = seeded.agents as [Agent, Agent];
      expect(await store.agents.delete(routed.id)).toEqual({ kind: 'routed', sourceIds: [seeded.source.id] });
      expect(await store.agents.get(routed.id)).toEqual(routed);
      expect((await store.agents.findByTokenHash(other.tokenHash))!.id).toBe(other.id);

      const signal = request({ ...seeded, source: everyAgent });
      await store.ingest.commit(signal);
      expect((await store.signals.get(signal.id))!.deliveries.map((d) => d.agentId).sort()).toEqual([routed.id, other.id].sort());
      expect(await store.agents.delete(other.id)).toEqual({ kind: 'deleted' });
      expect(await store.agents.get(other.id)).toBeNull();
      expect(await store.agents.findByTokenHash(other.tokenHash)).toBeNull();
      expect(await store.deliveries.take(other.id, at(2000), 10)).toEqual([]);
      // The signal stays in the log, with the deliveries of the agents that remain.
      expect((await store.signals.get(signal.id))!.deliveries.map((d) => d.agentId)).toEqual([routed.id]);
      // A later signal of the account goes to the agents that remain.
      const later = request({ ...seeded, source: (await store.sources.get(everyAgent.id))! });
      await store.ingest.commit(later);
      expect((await store.signals.get(later.id))!.deliveries.map((d) => d.agentId)).toEqual([routed.id]);
      expect(await store.agents.delete(other.id)).toEqual({ kind: 'not_found' });
    });

    it('deletes a source with its log, idempotency keys and the deliveries of its signals', async () => {
      const seeded = await seed(store, { agents: 1 });
      const kept = await seed(store, { agents: 1 });
      const first = request(seeded, { idempotencyKey: 'k1', requestHash: 'h1' });
      await store.ingest.commit(first);
      await store.ingest.commit(request(seeded, { verdict: { kind: 'reject', httpStatus: 422, problems: [{ code: 'MISSING_SYMBOL', detail: 'x' }] } }));
      const other = request(kept);
      await store.ingest.commit(other);

      expect(await store.sources.delete(seeded.source.id)).toBe(true);
      expect(await store.sources.get(seeded.source.id)).toBeNull();
      expect(await store.sources.findByAuthKey(seeded.authKey)).toBeNull();
      expect(await store.signals.get(first.id)).toBeNull();
      expect((await store.signals.list({ sourceId: seeded.source.id, limit: 10 })).signals).toEqual([]);
      expect(await store.deliveries.take(seeded.agents[0]!.id, at(2000), 10)).toEqual([]);
      expect(await store.sources.delete(seeded.source.id)).toBe(false);
      // Another source's log is untouched.
      expect((await store.signals.get(other.id))!.deliveries).toHaveLength(1);
      expect(await store.agents.get(seeded.agents[0]!.id)).toEqual(seeded.agents[0]);
    });

    it('filters the signal log by symbol, newest first, a page at a time', async () => {
      const seeded = await seed(store, { quota: 1000 });
      const gold = `XAU${randomUUID().slice(0, 8).toUpperCase()}`;
      const made: string[] = [];
      for (let i = 0; i < 5; i++) {
        const symbol = i % 2 === 0 ? gold : 'EURUSD';
        // A comment with an escaped NUL must not keep the symbol from being read.
        const r = request(seeded, { receivedAt: at(700_000 + i), verdict: accept({ ...BUY, symbol, ...(i === 4 && { comment: 'a\u0000b' }) }) });
        await store.ingest.commit(r);
        if (symbol === gold) made.push(r.id);
      }
      const newestFirst = made.reverse();
      const page = await store.signals.list({ symbol: gold, limit: 2 });
      expect(page.signals.map((s) => s.id)).toEqual(newestFirst.slice(0, 2));
      expect((await store.signals.list({ symbol: gold, limit: 2, before: page.next! })).signals.map((s) => s.id)).toEqual(newestFirst.slice(2));
      expect((await store.signals.list({ symbol: gold, sourceId: seeded.source.id, status: 'accepted', limit: 10 })).signals).toHaveLength(3);
      expect((await store.signals.list({ symbol: gold.toLowerCase(), limit: 10 })).signals).toEqual([]);
    });

    it('keeps dashboard sessions until deleted, and removes expired ones when the next is created', async () => {
      const session = { idDigest: `d-${randomUUID()}`, adminTokenDigest: 'admin', createdAt: at(0), expiresAt: at(1000) };
      await store.dashboardSessions.create(session);
      expect(await store.dashboardSessions.get(session.idDigest)).toEqual(session);
      const later = { idDigest: `d-${randomUUID()}`, adminTokenDigest: 'admin', createdAt: at(1000), expiresAt: at(5000) };
      await store.dashboardSessions.create(later);
      expect(await store.dashboardSessions.get(session.idDigest)).toBeNull();
      expect(await store.dashboardSessions.get(later.idDigest)).toEqual(later);
      expect(await store.dashboardSessions.delete(later.idDigest)).toBe(true);
      expect(await store.dashboardSessions.delete(later.idDigest)).toBe(false);
      expect(await store.dashboardSessions.get(later.idDigest)).toBeNull();
    });
  });
});
