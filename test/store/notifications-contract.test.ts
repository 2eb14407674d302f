import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewNotification, NotificationChannel } from '../../src/store/notifications.js';
import type { Store } from '../../src/store/store.js';
import { at, contractStores, seed, type StoreHarness } from './store-harness.js';

/** The store contract for notification channels and the outbox, run unchanged on both stores. */
describe.each(contractStores('contract_notifications'))('$name store', ({ harness: makeHarness }) => {
  let harness: StoreHarness;
  let store: Store;
  let other: Store;

  beforeAll(async () => {
    harness = await makeHarness();
    store = await harness.open();
    other = await harness.open();
  });

  afterAll(async () => {
    await other?.close();
    await store?.close();
    await harness?.dispose();
  });

  async function channel(overrides: Partial<NotificationChannel> = {}): Promise<NotificationChannel> {
    const { accountId } = await seed(store);
    const made: NotificationChannel = {
      id: `nch-${randomUUID()}`,
      accountId,
      kind: 'telegram',
      name: 'phone',
      settings: { chatId: '42' },
      secrets: { botToken: '123:abc' },
      events: ['agent_disconnected'],
      enabled: true,
      createdAt: at(0),
      ...overrides,
    };
    await store.notifications.createChannel(made);
    return made;
  }

  function note(made: NotificationChannel, ms: number, digestKey: string | null = null): NewNotification {
    return {
      channelId: made.id,
      accountId: made.accountId,
      event: { kind: 'signal_refused', at: at(ms), subject: { type: 'source', id: 'src-1' }, detail: { n: ms } },
      digestKey,
      digestWindowMs: 60_000,
    };
  }

  const claim = (s: Store, ms: number, owner = 'a', perMinute = 100) =>
    s.notifications.claim({ owner, now: at(ms), leaseMs: 30_000, limit: 50, perChannelPerMinute: perMinute });

  it('keeps a channel with its secrets, patches secrets key by key, and deletes it with its messages', async () => {
    const made = await channel();
    const got = await store.notifications.getChannel(made.id);
    expect(got).toMatchObject({ ...made, state: { failures: 0, pending: 0, lastSentAt: null } });
    const patched = await store.notifications.updateChannel(made.id, {
      name: 'desk phone',
      secrets: { extra: 'x' },
      events: ['quota_100'],
      enabled: false,
    });
    expect(patched).toMatchObject({
      name: 'desk phone',
      secrets: { botToken: '123:abc', extra: 'x' },
      events: ['quota_100'],
      enabled: false,
      settings: { chatId: '42' },
    });
    expect((await store.notifications.listChannels(made.accountId)).map((c) => c.id)).toEqual([made.id]);
    await store.notifications.enqueue([note(made, 1)], at(1));
    expect((await store.notifications.getChannel(made.id))?.state.pending).toBe(1);
    expect(await store.notifications.deleteChannel(made.id)).toBe(true);
    expect(await store.notifications.deleteChannel(made.id)).toBe(false);
    expect(await store.notifications.getChannel(made.id)).toBeNull();
    expect(await store.notifications.updateChannel(made.id, { name: 'x' })).toBeNull();
  });

  it('hands out one message per channel at a time, oldest first, and the next once it is sent', async () => {
    const made = await channel();
    await store.notifications.enqueue([note(made, 1), note(made, 2)], at(2));
    const first = (await claim(store, 3)).filter((m) => m.channelId === made.id);
    expect(first.map((m) => m.examples[0]!.detail)).toEqual([{ n: 1 }]);
    expect((await claim(other, 3, 'b')).filter((m) => m.channelId === made.id)).toEqual([]);
    expect(await store.notifications.settle(first[0]!.id, 'b', { sent: true, at: at(4) })).toBe(false);
    expect(await store.notifications.settle(first[0]!.id, 'a', { sent: true, at: at(4) })).toBe(true);
    const second = (await claim(other, 5, 'b')).filter((m) => m.channelId === made.id);
    expect(second.map((m) => m.examples[0]!.detail)).toEqual([{ n: 2 }]);
    expect((await store.notifications.getChannel(made.id))?.state.lastSentAt).toBe(at(4));
  });

  it('lets another instance take a message whose lease ran out, and not before', async () => {
    const made = await channel();
    await store.notifications.enqueue([note(made, 1)], at(1));
    const [taken] = (await claim(store, 2)).filter((m) => m.channelId === made.id);
    expect((await claim(other, 29_000, 'b')).filter((m) => m.channelId === made.id)).toEqual([]);
    const [again] = (await claim(other, 32_003, 'b')).filter((m) => m.channelId === made.id);
    expect(again?.id).toBe(taken!.id);
    expect(await store.notifications.settle(taken!.id, 'a', { sent: true, at: at(32_004) })).toBe(false);
  });

  it('sends each message once when two instances claim at the same time', async () => {
    const channels = await Promise.all([channel(), channel(), channel()]);
    for (const made of channels) {
      await store.notifications.enqueue([note(made, 1), note(made, 2), note(made, 3)], at(3));
    }
    const ids = new Set(channels.map((c) => c.id));
    const seen: number[] = [];
    for (let round = 0; round < 6; round++) {
      const [a, b] = await Promise.all([claim(store, 10 + round, 'a'), claim(other, 10 + round, 'b')]);
      const mine = [...a.map((m) => ({ m, owner: 'a' })), ...b.map((m) => ({ m, owner: 'b' }))].filter((x) =>
        ids.has(x.m.channelId),
      );
      for (const { m, owner } of mine) {
        seen.push(m.id);
        expect(
          await (owner === 'a' ? store : other).notifications.settle(m.id, owner, { sent: true, at: at(20) }),
        ).toBe(true);
      }
    }
    expect(seen).toHaveLength(9);
    expect(new Set(seen).size).toBe(9);
  });

  it('digests a burst of one key into the waiting message, and holds the next for the window', async () => {
    const made = await channel();
    await store.notifications.enqueue([note(made, 0, 'refused:src-1')], at(0));
    const [first] = (await claim(store, 1)).filter((m) => m.channelId === made.id);
    expect(first?.count).toBe(1);
    await store.notifications.settle(first!.id, 'a', { sent: true, at: at(2) });
    const burst = Array.from({ length: 500 }, (_, i) => note(made, 100 + i, 'refused:src-1'));
    await store.notifications.enqueue(burst, at(600));
    expect((await claim(store, 59_999)).filter((m) => m.channelId === made.id)).toEqual([]);
    const [digest] = (await claim(store, 60_000)).filter((m) => m.channelId === made.id);
    expect(digest).toMatchObject({ count: 500, firstAt: at(100), lastAt: at(599) });
    expect(digest!.examples.map((e) => e.detail)).toEqual([{ n: 100 }, { n: 101 }, { n: 102 }]);
  });

  it('backs a failing channel off, keeps its order, shows its state, and abandons on request', async () => {
    const made = await channel();
    await store.notifications.enqueue([note(made, 1), note(made, 2)], at(2));
    const [first] = (await claim(store, 3)).filter((m) => m.channelId === made.id);
    await store.notifications.settle(first!.id, 'a', {
      sent: false,
      at: at(4),
      error: 'HTTP 502',
      retryAt: at(10_000),
      giveUp: false,
    });
    expect((await store.notifications.getChannel(made.id))?.state).toMatchObject({
      failures: 1,
      failingSince: at(4),
      lastError: 'HTTP 502',
      retryAt: at(10_000),
      pending: 2,
    });
    expect((await claim(store, 9_999)).filter((m) => m.channelId === made.id)).toEqual([]);
    const [retried] = (await claim(store, 10_000)).filter((m) => m.channelId === made.id);
    expect(retried).toMatchObject({ id: first!.id, attempts: 1 });
    await store.notifications.settle(retried!.id, 'a', {
      sent: false,
      at: at(10_001),
      error: 'HTTP 502',
      retryAt: at(10_002),
      giveUp: true,
    });
    const [next] = (await claim(store, 10_003)).filter((m) => m.channelId === made.id);
    expect(next!.examples[0]!.detail).toEqual({ n: 2 });
    const recent = await store.notifications.recent(made.id, 10);
    expect(recent.map((m) => m.state)).toEqual(['pending', 'abandoned']);
  });

  it('sends a channel no more than its messages per minute', async () => {
    const made = await channel();
    await store.notifications.enqueue([note(made, 1), note(made, 2), note(made, 3)], at(3));
    for (const ms of [10, 20]) {
      const [m] = (await claim(store, ms, 'a', 2)).filter((x) => x.channelId === made.id);
      await store.notifications.settle(m!.id, 'a', { sent: true, at: at(ms) });
    }
    expect((await claim(store, 60_000, 'a', 2)).filter((m) => m.channelId === made.id)).toEqual([]);
    expect((await claim(store, 60_011, 'a', 2)).filter((m) => m.channelId === made.id)).toHaveLength(1);
  });

  it('prunes sent messages last touched before a time, and keeps waiting ones', async () => {
    const made = await channel();
    await store.notifications.enqueue([note(made, 1), note(made, 2)], at(2));
    const [m] = (await claim(store, 3)).filter((x) => x.channelId === made.id);
    await store.notifications.settle(m!.id, 'a', { sent: true, at: at(4) });
    expect(await store.notifications.prune(at(5))).toBeGreaterThanOrEqual(1);
    expect((await store.notifications.recent(made.id, 10)).map((x) => x.state)).toEqual(['pending']);
  });
});
