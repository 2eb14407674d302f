import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedAuthKey } from '../../src/store/auth-key-hash.js';
import type { Agent } from '../../src/store/records.js';
import type { AgentSessionClaim, Store } from '../../src/store/store.js';
import { accept, at, BUY, contractStores, request, seed, type StoreHarness } from './store-harness.js';

/** The store contract for deliveries (hand-outs, acks, expiry, notices), run unchanged against both implementations. */
describe.each(contractStores('contract_deliveries'))('$name store', ({ harness: makeHarness }) => {
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

  describe('delivery', () => {
    it('hands out oldest first up to the limit, marks them delivered and hands them out again until acked', async () => {
      const seeded = await seed(store, { agents: 1 });
      const agentId = seeded.agents[0]!.id;
      const ids: string[] = [];
      for (let i = 0; i < 3; i++)
        ids.push((await store.ingest.commit(request(seeded, { receivedAt: at(1000 + i) }))).record.id);

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
      for (let i = 0; i < 150; i++)
        ids.push((await store.ingest.commit(request(seeded, { receivedAt: at(1000 + i) }))).record.id);
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
      const claims = await Promise.all(
        seeded.agents.map(async (agent) => (await store.deliveries.claimSession(agent.id, agent.tokenHash))!),
      );
      const [rotatedClaim, deletedClaim, keptClaim] = claims as [
        AgentSessionClaim,
        AgentSessionClaim,
        AgentSessionClaim,
      ];
      try {
        const first = await store.ingest.commit(request(seeded, { receivedAt: at(1000) }));
        const firstId = first.kind === 'recorded' ? first.record.id : '';
        for (const claim of claims)
          expect((await claim.takeDeliveries(at(2000), 10)).signals.map((s) => s.id)).toEqual([firstId]);

        expect(await store.agents.rotateToken(rotated.id, 'new-digest-' + randomUUID())).not.toBeNull();
        expect(await store.agents.delete(deleted.id)).toEqual({ kind: 'deleted' });
        // The deletion moved the source to a new revision.
        const second = await store.ingest.commit(
          request({ ...seeded, source: (await store.sources.get(seeded.source.id))! }, { receivedAt: at(3000) }),
        );
        const secondId = second.kind === 'recorded' ? second.record.id : '';
        // Together, so that PostgreSQL's session connection may hand out for all three in one statement.
        const [afterRotation, afterDeletion, alongside] = await Promise.all(
          claims.map((claim) => claim.takeDeliveries(at(4000), 10)),
        );
        expect(afterRotation).toEqual({ signals: [], full: false, revoked: true });
        expect(afterDeletion).toEqual({ signals: [], full: false, revoked: true });
        expect(alongside).toEqual({
          signals: [expect.objectContaining({ id: secondId })],
          full: false,
          revoked: false,
        });
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
      const early = await store.ingest.commit(
        request(seeded, { receivedAt: at(1000), verdict: accept(BUY, at(10_000)) }),
      );
      const late = await store.ingest.commit(
        request(seeded, { receivedAt: at(1001), verdict: accept(BUY, at(20_000)) }),
      );
      const later = await store.ingest.commit(
        request(seeded, { receivedAt: at(1002), verdict: accept(BUY, at(30_000)) }),
      );

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
      const expiring = await store.ingest.commit(
        request(seeded, { receivedAt: at(1000), verdict: accept(BUY, at(10_000)) }),
      );
      const handedOut = await store.ingest.commit(
        request(seeded, { receivedAt: at(1001), verdict: accept(BUY, at(10_000)) }),
      );
      const normal = await store.ingest.commit(request(seeded, { receivedAt: at(1002) }));

      // Hand out handedOut and normal (not expiring), as the agent's poll would.
      expect((await store.deliveries.take(other, at(2000), 10)).length).toBe(3);
      await store.deliveries.take(agent, at(2000), 10);
      await store.deliveries.ack(
        agent,
        expiring.record.id,
        { status: 'failed', message: null, result: null },
        at(2100),
      );
      await store.deliveries.take(agent, at(10_000), 10);

      const result = { ticket: 42, price: 1.0845 };
      const acked = await store.deliveries.ack(
        agent,
        normal.record.id,
        { status: 'executed', message: 'filled', result },
        at(11_000),
      );
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
          timings: null,
        },
      });
      const same = await store.deliveries.ack(
        agent,
        normal.record.id,
        { status: 'executed', message: 'x', result: null },
        at(12_000),
      );
      expect(same).toEqual({ kind: 'already_acked', delivery: acked.kind === 'acked' ? acked.delivery : null });
      const clash = await store.deliveries.ack(
        agent,
        normal.record.id,
        { status: 'rejected', message: null, result: null },
        at(12_000),
      );
      expect(clash.kind).toBe('conflict');
      expect(clash.kind === 'conflict' && clash.delivery.status).toBe('executed');

      // Handed out, then expired: the agent may have executed it, so the ack is taken.
      const lateAck = await store.deliveries.ack(
        agent,
        handedOut.record.id,
        { status: 'executed', message: null, result: null },
        at(12_000),
      );
      expect(lateAck.kind === 'acked' && lateAck.delivery).toMatchObject({
        status: 'executed',
        ackedAfterExpiry: true,
      });

      // Expired before it was ever handed out: the agent cannot have acted on it.
      const fresh = await seed(store, { agents: 1 });
      const stale = await store.ingest.commit(request(fresh, { verdict: accept(BUY, at(5000)) }));
      await store.deliveries.take(fresh.agents[0]!.id, at(6000), 10);
      const expired = await store.deliveries.ack(
        fresh.agents[0]!.id,
        stale.record.id,
        { status: 'executed', message: null, result: null },
        at(7000),
      );
      expect(expired.kind).toBe('expired');
      expect(expired.kind === 'expired' && expired.delivery).toMatchObject({ status: 'expired', deliveredAt: null });

      // A delivery never handed out is refused: the agent cannot have acted on it, and taking
      // the ack would settle a signal that was never delivered. It stays queued and is handed
      // out next; once past its expiresAt the refusal says it expired.
      const never = await store.ingest.commit(
        request(seeded, { receivedAt: at(12_500), verdict: accept(BUY, at(20_000)) }),
      );
      const direct = await store.deliveries.ack(
        agent,
        never.record.id,
        { status: 'rejected', message: 'no margin', result: null },
        at(13_000),
      );
      expect(direct.kind).toBe('not_delivered');
      expect(direct.kind === 'not_delivered' && direct.delivery).toMatchObject({
        status: 'queued',
        deliveredAt: null,
        ackedAt: null,
      });
      expect((await store.signals.get(never.record.id))!.deliveries.find((d) => d.agentId === agent)).toMatchObject({
        status: 'queued',
        ackedAt: null,
        message: null,
      });
      const tooLate = await store.deliveries.ack(
        agent,
        never.record.id,
        { status: 'executed', message: null, result: null },
        at(20_000),
      );
      expect(tooLate.kind).toBe('expired');
      expect((await store.deliveries.take(agent, at(19_000), 10)).map((d) => d.id)).toEqual([never.record.id]);

      expect(
        await store.deliveries.ack(agent, 'sig-missing', { status: 'executed', message: null, result: null }, at(1)),
      ).toEqual({
        kind: 'not_found',
      });
      const stranger = await seed(store, { agents: 1 });
      expect(
        await store.deliveries.ack(
          stranger.agents[0]!.id,
          normal.record.id,
          { status: 'executed', message: null, result: null },
          at(1),
        ),
      ).toEqual({ kind: 'not_found' });
      // The failed ack of `expiring` stands.
      expect((await store.signals.get(expiring.record.id))!.deliveries.find((d) => d.agentId === agent)).toMatchObject({
        status: 'failed',
        ackedAt: at(2100),
      });
    });

    it("keeps the agent's timings with the outcome, and none for an agent that sends none", async () => {
      const seeded = await seed(store, { agents: 1 });
      const agent = seeded.agents[0]!.id;
      const timed = (await store.ingest.commit(request(seeded, { receivedAt: at(1000) }))).record.id;
      const untimed = (await store.ingest.commit(request(seeded, { receivedAt: at(1001) }))).record.id;
      await store.deliveries.take(agent, at(2000), 10);
      const timings = { decidedAt: at(2010), sentAt: at(2011), venueAckedAt: at(2030), filledAt: at(2030) };
      // Both in one turn: on PostgreSQL they share one grouped statement.
      const [first, second] = await Promise.all([
        store.deliveries.ack(agent, timed, { status: 'executed', message: null, result: null, timings }, at(2040)),
        store.deliveries.ack(agent, untimed, { status: 'executed', message: null, result: null }, at(2041)),
      ]);
      expect(first.kind === 'acked' && first.delivery.timings).toEqual(timings);
      expect(second.kind === 'acked' && second.delivery.timings).toBeNull();
      const shown = await store.signals.get(timed);
      expect(shown!.receivedAt).toBe(at(1000));
      expect(shown!.deliveries[0]).toMatchObject({ deliveredAt: at(2000), ackedAt: at(2040), timings });
      expect((await store.signals.get(untimed))!.deliveries[0]!.timings).toBeNull();
      // A repeat of the ack answers the timings first stored.
      const again = await store.deliveries.ack(
        agent,
        timed,
        { status: 'executed', message: null, result: null, timings: { ...timings, filledAt: at(9999) } },
        at(2050),
      );
      expect(again.kind === 'already_acked' && again.delivery.timings).toEqual(timings);
    });

    it('says when an acknowledgement came at or after expiresAt, whether or not a poll marked the delivery expired', async () => {
      const seeded = await seed(store, { agents: 1 });
      const agent = seeded.agents[0]!.id;
      const marked = await store.ingest.commit(
        request(seeded, { receivedAt: at(1000), verdict: accept(BUY, at(10_000)) }),
      );
      const inTime = await store.ingest.commit(
        request(seeded, { receivedAt: at(1002), verdict: accept(BUY, at(10_000)) }),
      );
      await store.deliveries.take(agent, at(2000), 10);
      const early = await store.deliveries.ack(
        agent,
        inTime.record.id,
        { status: 'executed', message: null, result: null },
        at(9999),
      );
      expect(early.kind === 'acked' && early.delivery.ackedAfterExpiry).toBe(false);
      expect(await store.deliveries.take(agent, at(10_000), 10)).toEqual([]);
      const late = await store.deliveries.ack(
        agent,
        marked.record.id,
        { status: 'failed', message: null, result: null },
        at(11_000),
      );
      expect(late.kind === 'acked' && late.delivery).toMatchObject({ status: 'failed', ackedAfterExpiry: true });
      expect((await store.signals.get(marked.record.id))!.deliveries[0]).toMatchObject({
        status: 'failed',
        ackedAfterExpiry: true,
      });
      expect((await store.signals.get(inTime.record.id))!.deliveries[0]).toMatchObject({
        status: 'executed',
        ackedAfterExpiry: false,
      });

      // Not polled since it expired: still `delivered` in the store, but past its time all the same.
      const other = await seed(store, { agents: 1 });
      const lazy = await store.ingest.commit(
        request(other, { receivedAt: at(1000), verdict: accept(BUY, at(10_000)) }),
      );
      await store.deliveries.take(other.agents[0]!.id, at(2000), 10);
      const atExpiry = await store.deliveries.ack(
        other.agents[0]!.id,
        lazy.record.id,
        { status: 'executed', message: null, result: null },
        at(10_000),
      );
      expect(atExpiry.kind === 'acked' && atExpiry.delivery).toMatchObject({
        status: 'executed',
        ackedAfterExpiry: true,
      });
      // Answered again as it stands.
      const again = await store.deliveries.ack(
        other.agents[0]!.id,
        lazy.record.id,
        { status: 'executed', message: null, result: null },
        at(12_000),
      );
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
      const expired = await store.ingest.commit(
        request(seeded, { receivedAt: at(3001), verdict: accept(BUY, at(4000)) }),
      );
      // Polls that hand out nothing still mark what expired.
      for (const id of [agent, second]) expect(await store.deliveries.take(id, at(5000), 0)).toEqual([]);
      const elsewhere = await store.ingest.commit(request(seeded, { sourceId: otherSource.id, receivedAt: at(3002) }));

      expect(
        (await store.sources.update(seeded.source.id, { maxSignalAgeSeconds: 30 }, at(5000)))!.maxSignalAgeSeconds,
      ).toBe(30);
      const expiries = async (id: string) =>
        (await store.signals.get(id))!.deliveries.map((d) => [d.agentId, d.status, d.expiresAt]);
      const byAgent = (rows: Record<string, [string, string]>) =>
        Object.keys(rows)
          .sort()
          .map((id) => [id, ...rows[id]!]);
      const both = (status: string, expiresAt: string) =>
        byAgent({ [agent]: [status, expiresAt], [second]: [status, expiresAt] });
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
      expect(await expiries(queued.record.id)).toEqual(
        byAgent({ [agent]: ['delivered', at(33_000)], [second]: ['queued', at(33_000)] }),
      );
    });

    it('never revives a delivery already past its deadline when the age is raised, marked expired or not', async () => {
      const seeded = await seed(store, { agents: 1 });
      const agent = seeded.agents[0]!.id;
      // Due at 4 s; no poll or sweep has marked it expired when the age is raised at 5 s.
      const overdue = await store.ingest.commit(
        request(seeded, { receivedAt: at(1000), verdict: accept(BUY, at(4000)) }),
      );
      // Due at 6 s: still ahead at the raise, so it takes the longer life.
      const pending = await store.ingest.commit(
        request(seeded, { receivedAt: at(3000), verdict: accept(BUY, at(6000)) }),
      );
      await store.sources.update(seeded.source.id, { maxSignalAgeSeconds: 3600 }, at(5000));
      const [o] = (await store.signals.get(overdue.record.id))!.deliveries;
      expect(o).toMatchObject({ status: 'queued', expiresAt: at(4000) });
      expect((await store.deliveries.take(agent, at(5001), 10)).map((d) => [d.id, d.expiresAt])).toEqual([
        [pending.record.id, at(3_603_000)],
      ]);
      expect((await store.signals.get(overdue.record.id))!.deliveries[0]).toMatchObject({
        status: 'expired',
        expiresAt: at(4000),
      });
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

  describe('watch', () => {
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
      await store.ingest.commit(
        request(seeded, {
          verdict: { kind: 'reject', httpStatus: 422, problems: [{ code: 'MISSING_SYMBOL', detail: 'x' }] },
        }),
      );
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
});
