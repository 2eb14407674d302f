import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { ExpiredDelivery } from '../records.js';
import type { AgentSessionClaim, SessionHandOut } from '../store.js';
import { StatementQueue } from './statement-queue.js';
import { type HandOut, type HandOutRequest, sessionLockKeySql, takeDeliveriesFor } from './take-deliveries.js';

/** Attempts, and the pause between them, before a claim gives up on a key held by polls only. */
const CLAIM_ATTEMPTS = 10;
const CLAIM_RETRY_MS = 25;
/** The session lock's key, of the agent id ($1) and the schema ($2). */
const KEY = sessionLockKeySql('$1', '$2');

/**
 * Connections holding the sessions' locks. On one, every hand-out waited for the statement under
 * way there and then its own, which took about as long for 12 agents as for 50 (in the burst its
 * backend waited on the WAL about as much as it computed): on several, the hand-outs of
 * different sessions run side by side.
 */
const CONNECTIONS = 4;

/**
 * The WebSocket push sessions this instance holds, as session-level advisory locks on a few
 * connections of its own. Every instance on the database sees them, and they end with their
 * connection: a crashed instance frees its agents at once. A poll's hand-out anywhere holds
 * the same key shared for its one statement, so it cannot hand out beside a session. A session
 * hands out on the connection holding its lock: while a query succeeds there, the lock is held.
 * When a connection breaks, every claim on it is lost, and those sessions must close. Claims,
 * hand-outs and releases share a connection one statement at a time, in the order asked. A
 * claim goes to the connection with the fewest sessions.
 */
export class SessionLocks {
  private readonly connections: Array<Promise<LockConnection> | null> = Array.from({ length: CONNECTIONS }, () => null);
  /** Sessions held or being claimed, per connection. */
  private readonly sessions: number[] = Array.from({ length: CONNECTIONS }, () => 0);

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly scope: () => string,
    /** Told, after the commit, of the deliveries a session's hand-out marked expired. */
    private readonly onExpired: (expired: ExpiredDelivery[]) => void,
  ) {}

  async claim(agentId: string, tokenHash: string): Promise<AgentSessionClaim | null> {
    const slot = this.sessions.indexOf(Math.min(...this.sessions));
    this.sessions[slot]!++;
    let claimed: AgentSessionClaim | null = null;
    try {
      const connection = await this.connect(slot);
      for (let attempt = 1; ; attempt++) {
        const { rows } = await connection.statements.query<{ ok: boolean }>(
          `SELECT pg_try_advisory_lock(${KEY}) AS ok`,
          [agentId, this.scope()],
        );
        if (rows[0]?.ok) {
          claimed = connection.claimFor(agentId, tokenHash, this.scope(), this.onExpired, () => this.sessions[slot]!--);
          return claimed;
        }
        // Held: by a session elsewhere (for good), or by polls handing out this very moment.
        if (attempt >= CLAIM_ATTEMPTS || (await connection.heldExclusively(agentId, this.scope()))) return null;
        await sleep(CLAIM_RETRY_MS);
      }
    } finally {
      if (!claimed) this.sessions[slot]!--;
    }
  }

  async close(): Promise<void> {
    const connections = [...this.connections];
    this.connections.fill(null);
    await Promise.all(connections.map(async (connection) => (await connection?.catch(() => null))?.end()));
  }

  private connect(slot: number): Promise<LockConnection> {
    const open = this.connections[slot];
    if (open) return open;
    const opening = LockConnection.open({
      ...this.config,
      application_name: `signalgate-sessions ${this.scope()}`.slice(0, 63),
    });
    this.connections[slot] = opening;
    // A connection that broke, or never opened, is forgotten, so the next claim opens a new one.
    const forget = () => {
      if (this.connections[slot] === opening) this.connections[slot] = null;
    };
    opening.then((connection) => connection.onBroken(forget), forget);
    return opening;
  }
}

interface HandOutTask extends HandOutRequest {
  scope: string;
  now: string;
  /** False once the session was released: its hand-out must not run after the unlock. */
  held: () => boolean;
}

type QueuedHandOut = {
  task: HandOutTask;
  resolve: (handOut: HandOut | null) => void;
  reject: (error: unknown) => void;
};

class LockConnection {
  private broken = false;
  private readonly brokenListeners = new Set<() => void>();
  readonly statements: StatementQueue;
  /** Hand-outs waiting for the connection, run together in one transaction. */
  private handOuts: QueuedHandOut[] = [];
  /** A turn for the waiting hand-outs is queued and has not started yet. */
  private handOutTurnQueued = false;

  private constructor(private readonly client: pg.Client) {
    this.statements = new StatementQueue(client);
    const lost = () => this.break();
    client.on('error', lost);
    client.on('end', lost);
  }

  static async open(config: pg.ClientConfig): Promise<LockConnection> {
    const client = new pg.Client({ ...config, connectionTimeoutMillis: 10_000 });
    client.on('error', () => undefined);
    await client.connect();
    return new LockConnection(client);
  }

  onBroken(listener: () => void): void {
    if (this.broken) listener();
    else this.brokenListeners.add(listener);
  }

  async heldExclusively(agentId: string, scope: string): Promise<boolean> {
    const { rows } = await this.statements.query<{ held: boolean }>(
      `SELECT EXISTS (
         SELECT 1 FROM pg_locks
          WHERE locktype = 'advisory' AND objsubid = 1 AND granted AND mode = 'ExclusiveLock'
            AND classid = ((${KEY} >> 32) & 4294967295)::oid AND objid = (${KEY} & 4294967295)::oid
       ) AS held`,
      [agentId, scope],
    );
    return rows[0]?.held ?? false;
  }

  /** The claim of a lock this connection just took; `ended` is called once, when it is released or lost. */
  claimFor(
    agentId: string,
    tokenHash: string,
    scope: string,
    onExpired: (expired: ExpiredDelivery[]) => void,
    ended: () => void,
  ): AgentSessionClaim {
    let released = false;
    /** The last seq this session handed out: an agent's seqs are committed in order. */
    let handedUpTo = 0;
    const lostListeners = new Set<() => void>();
    const lose = () => {
      ended();
      for (const listener of lostListeners) listener();
      lostListeners.clear();
    };
    this.onBroken(lose);
    return {
      takeDeliveries: async (now: string, limit: number): Promise<SessionHandOut> => {
        if (released || this.broken) throw notHeld(agentId);
        const after = handedUpTo;
        const handOut = await this.handOut({ agentId, limit, after, tokenHash, scope, now, held: () => !released });
        // Null only when the statement found the token rotated or the agent deleted.
        if (handOut === null) return { signals: [], full: false, revoked: true };
        if (handOut.expired.length > 0) onExpired(handOut.expired);
        const last = handOut.signals[handOut.signals.length - 1];
        if (last) handedUpTo = last.seq;
        return { signals: handOut.signals, full: handOut.full, revoked: false };
      },
      onLost: (listener) => {
        if (this.broken && !released) listener();
        else lostListeners.add(listener);
      },
      release: async () => {
        if (released) return;
        released = true;
        lostListeners.clear();
        if (this.broken) return;
        this.brokenListeners.delete(lose);
        ended();
        await this.statements.query(`SELECT pg_advisory_unlock(${KEY})`, [agentId, scope]);
      },
    };
  }

  /**
   * Every session hands out on this one connection, one statement at a time: with each its own
   * COMMIT (a WAL flush), 200 sessions in a burst queued behind one another's flushes (hand-off
   * p99 4.3 s), and then, in one transaction, behind one another's round trips. The hand-outs
   * that queue while one runs go together as the next, one statement for all their agents
   * (disjoint rows: one session per agent), sorted by agent id. If it fails, each is run again
   * alone, so only a failing one fails.
   */
  private handOut(task: HandOutTask): Promise<HandOut | null> {
    return new Promise((resolve, reject) => {
      this.handOuts.push({ task, resolve, reject });
      if (this.handOutTurnQueued) return;
      this.handOutTurnQueued = true;
      void this.statements.turn((client) => this.runHandOuts(client));
    });
  }

  /**
   * One turn on the connection for every hand-out waiting when it starts. Those whose session
   * was released meanwhile are left out: the release's unlock was queued before this turn, so
   * they would hand out without the hold.
   */
  private async runHandOuts(client: pg.Client): Promise<void> {
    this.handOutTurnQueued = false;
    const waiting = this.handOuts;
    this.handOuts = [];
    const group: QueuedHandOut[] = [];
    for (const item of waiting) {
      if (item.task.held()) group.push(item);
      else item.reject(notHeld(item.task.agentId));
    }
    if (group.length > 1) {
      const tasks = group
        .map((item) => item.task)
        .sort((a, b) => (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0));
      const now = tasks.reduce(
        (latest, task) => (Date.parse(task.now) > Date.parse(latest) ? task.now : latest),
        tasks[0]!.now,
      );
      const distinct = new Set(tasks.map((task) => `${task.scope}\n${task.agentId}`)).size === tasks.length;
      const oneScope = tasks.every((task) => task.scope === tasks[0]!.scope);
      if (distinct && oneScope) {
        try {
          const handOuts = await takeDeliveriesFor(client, 'session', tasks[0]!.scope, tasks, now);
          for (const item of group) item.resolve(handOuts.get(item.task.agentId) ?? null);
          return;
        } catch {
          // Run each alone below.
        }
      }
    }
    for (const item of group) {
      try {
        const { agentId, scope, now } = item.task;
        item.resolve((await takeDeliveriesFor(client, 'session', scope, [item.task], now)).get(agentId) ?? null);
      } catch (error) {
        item.reject(error);
      }
    }
  }

  async end(): Promise<void> {
    this.broken = true;
    this.brokenListeners.clear();
    await this.client.end().catch(() => undefined);
  }

  private break(): void {
    if (this.broken) return;
    this.broken = true;
    const listeners = [...this.brokenListeners];
    this.brokenListeners.clear();
    for (const listener of listeners) listener();
  }
}

/** What a hand-out of a session no longer held fails with: nothing was handed out. */
function notHeld(agentId: string): Error {
  return new Error(`the push session of agent ${agentId} is no longer held`);
}
