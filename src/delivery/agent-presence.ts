import type { Logger } from 'pino';
import type { Store } from '../store/store.js';

/** `lastSeenAt` is kept to this precision: at most one write per agent per interval. */
export const PRESENCE_INTERVAL_MS = 1000;

/**
 * Records that an agent was seen (`lastSeenAt`). Every agent request and WebSocket message
 * counts, but a busy agent would otherwise cost one extra committed write per request, so
 * writes are spaced at least PRESENCE_INTERVAL_MS apart per agent.
 */
export class AgentPresence {
  private readonly lastWritten = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
  ) {}

  /** Resolves once recorded (or skipped as too recent); never rejects: presence is advisory. */
  async seen(agentId: string, nowMillis = Date.now()): Promise<void> {
    const last = this.lastWritten.get(agentId);
    if (last !== undefined && nowMillis - last < PRESENCE_INTERVAL_MS) return;
    this.lastWritten.set(agentId, nowMillis);
    try {
      await this.store.agents.touch(agentId, new Date(nowMillis).toISOString());
    } catch (err) {
      this.lastWritten.delete(agentId);
      this.logger.warn({ err, agentId }, 'could not record agent presence');
    }
  }

  /** A state snapshot was saved, which records presence too. */
  recorded(agentId: string, nowMillis: number): void {
    this.lastWritten.set(agentId, nowMillis);
  }
}
