import { MAX_WAIT_SECONDS } from '../protocol/long-poll-wait.js';
import type { AgentSessionClaim, SessionHandOut, Store } from '../store/store.js';

/** A polling agent counts as connected this long after its last poll began. */
const POLL_CONNECTED_MS = (MAX_WAIT_SECONDS + 5) * 1000;

/**
 * What this process handed out to agents and took back from them, for the metrics: deliveries
 * by the status they reached here (`delivered` when handed out, then the acknowledged status),
 * and which agents are connected (a WebSocket session held here, or a poll answered here in
 * the last MAX_WAIT_SECONDS + 5 s). It counts at the store's hand-out and acknowledgement calls,
 * which every delivery path goes through, so the delivery code itself carries no metric code.
 */
export class DeliveryMeter {
  /** Deliveries by the status they reached in this process. */
  readonly byStatus = new Map<string, number>();
  private readonly sessions = new Map<string, number>();
  private readonly polledAt = new Map<string, number>();
  /**
   * Set while a session's hand-out is being started: a backend whose session hands out through
   * the deliveries' own `take` (SQLite) calls it synchronously then, and that call is the
   * session's, counted once by the session.
   */
  private startingSessionTake = false;

  /** Makes `store` report its hand-outs and acknowledgements here (replaces three methods of its deliveries on the instance, and watches its expiries). */
  watch(store: Store): void {
    const deliveries = store.deliveries;
    const take = deliveries.take.bind(deliveries);
    deliveries.take = async (agentId, now, limit) => {
      const poll = !this.startingSessionTake;
      if (poll) this.polledAt.set(agentId, Date.now());
      const signals = await take(agentId, now, limit);
      if (poll) this.add('delivered', signals.length);
      return signals;
    };
    const ack = deliveries.ack.bind(deliveries);
    deliveries.ack = async (agentId, signalId, given, now) => {
      const outcome = await ack(agentId, signalId, given, now);
      if (outcome.kind === 'acked') this.add(outcome.delivery.status, 1);
      return outcome;
    };
    // Expired by a hand-out or by the expiry sweep: the store tells its expiry watchers of both.
    deliveries.watchExpiries((expired) => this.add('expired', expired.length));
    const claim = deliveries.claimSession.bind(deliveries);
    deliveries.claimSession = async (agentId, tokenHash) => {
      const held = await claim(agentId, tokenHash);
      return held === null ? null : this.session(agentId, held);
    };
  }

  /** How many distinct agents are connected to this process now. */
  connectedAgents(nowMillis = Date.now()): number {
    const connected = new Set(this.sessions.keys());
    for (const [agentId, at] of this.polledAt) {
      if (nowMillis - at <= POLL_CONNECTED_MS) connected.add(agentId);
      else this.polledAt.delete(agentId);
    }
    return connected.size;
  }

  private add(status: string, count: number): void {
    if (count > 0) this.byStatus.set(status, (this.byStatus.get(status) ?? 0) + count);
  }

  private session(agentId: string, held: AgentSessionClaim): AgentSessionClaim {
    this.sessions.set(agentId, (this.sessions.get(agentId) ?? 0) + 1);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const left = (this.sessions.get(agentId) ?? 1) - 1;
      if (left > 0) this.sessions.set(agentId, left);
      else this.sessions.delete(agentId);
    };
    held.onLost(end);
    return {
      takeDeliveries: async (now, limit) => {
        this.startingSessionTake = true;
        let taking: Promise<SessionHandOut>;
        try {
          taking = held.takeDeliveries(now, limit);
        } finally {
          this.startingSessionTake = false;
        }
        const handOut = await taking;
        this.add('delivered', handOut.signals.length);
        return handOut;
      },
      onLost: (listener) => held.onLost(listener),
      release: async () => {
        end();
        await held.release();
      },
    };
  }
}
