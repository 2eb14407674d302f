import { riskRuleOf } from '../protocol/risk-refusal.js';
import type { Logger } from 'pino';
import type { Notifier } from '../notifications/notifier.js';
import type { Delivery } from '../protocol/delivery.js';
import type { ExpiredDelivery } from '../store/records.js';
import type { Store } from '../store/store.js';

/**
 * How often agents' presence is looked at for the disconnected and back events: every 15 s, or
 * a quarter of a shorter offline time, so an agent gone is told within 25 % of that time.
 */
export function presenceWatchMs(agentOfflineMs: number): number {
  return Math.max(250, Math.min(15_000, Math.floor(agentOfflineMs / 4)));
}

interface AgentFacts {
  accountId: string;
  name: string;
}

interface StateFacts {
  connected: boolean | null;
  reason: string;
  notManaged: Set<string>;
  unprotected: Set<string>;
}

const LOGON_REFUSED = /logon|log on|login|auth|password|credential|api key|permission/i;

/** The facts of an agent's published state the notifications compare (see docs/agents.md). */
function stateFacts(state: unknown): StateFacts {
  const record = (state ?? {}) as Record<string, unknown>;
  const list = (value: unknown) => (Array.isArray(value) ? (value as Array<Record<string, unknown>>) : []);
  return {
    connected: typeof record.connected === 'boolean' ? record.connected : null,
    reason: typeof record.disconnectedBecause === 'string' ? record.disconnectedBecause : '',
    notManaged: new Set(list(record.notManaged).map((e) => `${String(e.kind)} ${String(e.id)} ${String(e.symbol)}`)),
    unprotected: new Set(
      list(record.positions)
        .filter((p) => p.unprotected !== undefined && p.unprotected !== null)
        .map((p) => `${String(p.id)} ${String(p.symbol)}`),
    ),
  };
}

/**
 * What the delivery side tells the account's notifications: rejected, failed and expired
 * deliveries, agents gone for longer than the set time (and back), and the agent's own reports
 * in its state (venue session lost or logon refused, positions or orders not managed, positions
 * without a stop), each told when it begins, not at every publication.
 */
export class DeliveryAlerts {
  private readonly agents = new Map<string, AgentFacts>();
  private readonly states = new Map<string, StateFacts>();
  private readonly offline = new Set<string>();
  private watch: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: Store,
    private readonly notifier: Notifier,
    private readonly logger: Logger,
    private readonly agentOfflineMs: number,
    /** Whether this instance holds the watch lease: only the watcher tells presence (once across instances). */
    private readonly watching: () => boolean = () => true,
  ) {}

  private async agent(agentId: string): Promise<AgentFacts | null> {
    let facts = this.agents.get(agentId);
    if (!facts) {
      const agent = await this.store.agents.get(agentId);
      if (agent === null) return null;
      facts = { accountId: agent.accountId, name: agent.name };
      this.agents.set(agentId, facts);
    }
    return facts;
  }

  /** An acknowledgement recorded: rejected and failed ones are told. */
  acknowledged(delivery: Delivery): void {
    if (delivery.status !== 'rejected' && delivery.status !== 'failed') return;
    void this.agent(delivery.agentId)
      .then((agent) => {
        if (agent === null) return;
        // A signal a risk rule stopped at the agent is its own event: the trader chose that rule.
        const rule = riskRuleOf(delivery.result);
        if (rule !== null) {
          this.notifier.tell(agent.accountId, {
            kind: 'risk_rule_hit',
            subject: { type: 'signal', id: delivery.signalId },
            detail: { agent: agent.name, agentId: delivery.agentId, rule, message: delivery.message ?? '' },
          });
          return;
        }
        this.notifier.tell(agent.accountId, {
          kind: delivery.status === 'rejected' ? 'delivery_rejected' : 'delivery_failed',
          subject: { type: 'signal', id: delivery.signalId },
          detail: { agent: agent.name, agentId: delivery.agentId, message: delivery.message ?? '' },
        });
      })
      .catch((err: unknown) => this.logger.warn({ err }, 'notifications: an acknowledgement was not told'));
  }

  expired(expired: ExpiredDelivery[]): void {
    for (const item of expired) {
      void this.agent(item.agentId)
        .then((agent) => {
          if (agent === null) return;
          this.notifier.tell(agent.accountId, {
            kind: 'delivery_expired',
            subject: { type: 'signal', id: item.signalId },
            detail: { agent: agent.name, agentId: item.agentId, expiresAt: item.expiresAt },
          });
        })
        .catch((err: unknown) => this.logger.warn({ err }, 'notifications: an expiry was not told'));
    }
  }

  /** Before the agent's new state is saved: compares it with the previous one. */
  async stateReported(agentId: string, state: unknown): Promise<void> {
    try {
      const agent = await this.agent(agentId);
      if (agent === null) return;
      let before = this.states.get(agentId);
      if (!before) before = stateFacts((await this.store.agents.get(agentId))?.state ?? null);
      const now = stateFacts(state);
      this.states.set(agentId, now);
      const subject = { type: 'agent' as const, id: agentId, name: agent.name };
      if (now.connected === false && before.connected !== false) {
        this.notifier.tell(agent.accountId, {
          kind: LOGON_REFUSED.test(now.reason) ? 'venue_logon_refused' : 'venue_session_lost',
          subject,
          detail: { reason: now.reason },
        });
      }
      const newlyNotManaged = [...now.notManaged].filter((entry) => !before.notManaged.has(entry));
      if (newlyNotManaged.length > 0) {
        this.notifier.tell(agent.accountId, {
          kind: 'book_mismatch',
          subject,
          detail: { notManaged: newlyNotManaged.join(', ') },
        });
      }
      for (const position of now.unprotected) {
        if (before.unprotected.has(position)) continue;
        this.notifier.tell(agent.accountId, { kind: 'position_unprotected', subject, detail: { position } });
      }
    } catch (err) {
      this.logger.warn({ err, agentId }, 'notifications: an agent state was not compared');
    }
  }

  /** Looks at every agent's last sight every 15 s (see presenceWatchMs): gone past the set time, and back. */
  startPresenceWatch(): void {
    const intervalMs = presenceWatchMs(this.agentOfflineMs);
    const round = async () => {
      if (!this.watching()) {
        // Another instance watches. Should this one take over, it starts afresh: agents gone
        // long before are not news, as at a start.
        this.offline.clear();
        this.started = false;
        return;
      }
      const now = Date.now();
      let before: string | undefined;
      do {
        const page = await this.store.agents.list({ limit: 200, ...(before !== undefined && { before }) });
        for (const entry of page.items) {
          const seen = entry.lastSeenAt === null ? null : Date.parse(entry.lastSeenAt);
          if (seen === null) continue;
          const gone = now - seen > this.agentOfflineMs;
          const subject = { type: 'agent' as const, id: entry.id, name: entry.name };
          if (gone && !this.offline.has(entry.id)) {
            this.offline.add(entry.id);
            // Gone before this server started: not news.
            if (now - seen > this.agentOfflineMs + 2 * intervalMs && !this.started) continue;
            this.notifier.tell(entry.accountId, {
              kind: 'agent_disconnected',
              subject,
              detail: { lastSeenAt: entry.lastSeenAt, minutesGone: Math.floor((now - seen) / 60_000) },
            });
          } else if (!gone && this.offline.delete(entry.id)) {
            this.notifier.tell(entry.accountId, {
              kind: 'agent_reconnected',
              subject,
              detail: { at: entry.lastSeenAt },
            });
          }
        }
        before = page.next ?? undefined;
      } while (before !== undefined);
      this.started = true;
    };
    const schedule = () => {
      this.watch = setTimeout(() => {
        round()
          .catch((err: unknown) => this.logger.warn({ err }, 'notifications: the presence watch failed'))
          .finally(() => {
            if (this.watch !== null) schedule();
          });
      }, intervalMs);
      this.watch.unref();
    };
    schedule();
  }

  private started = false;

  stop(): void {
    if (this.watch) clearTimeout(this.watch);
    this.watch = null;
  }
}
