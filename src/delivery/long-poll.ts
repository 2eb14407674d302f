import type { AgentSignal } from '../protocol/agent-signal.js';
import { MAX_WAIT_SECONDS } from '../protocol/long-poll-wait.js';
import { AgentSessionOpenError } from '../store/agent-session-open.js';
import type { Store } from '../store/store.js';
import { DELIVERY_BATCH } from './delivery-batch.js';
import type { DeliveryBoard } from './delivery-board.js';
import { WakeLatch } from './wake-latch.js';

/**
 * Takes the agent's pending deliveries; with none, holds for up to `waitMs` and answers as
 * soon as some are committed. The watch is set up before the first look, so a delivery
 * committed while the store is being asked still wakes the wait. Answers empty when the wait
 * runs out, the client went away (`abort`), or the server is closing; answers null, taking
 * nothing for the poller, once `superseded()` says a WebSocket session of the agent opened here
 * or the store says one is open in another process.
 */
export async function longPoll(
  store: Store,
  board: DeliveryBoard,
  agentId: string,
  waitMs: number,
  abort: AbortSignal,
  superseded: () => boolean,
  /** Whether the token the poll came with still belongs to the agent (checked after each wait). */
  stillAuthorized: () => Promise<boolean> = async () => true,
): Promise<AgentSignal[] | null> {
  const deadline = Date.now() + waitMs;
  const latch = new WakeLatch();
  const unwatch = board.watch(agentId, (reason) => {
    if (reason !== 'acked') latch.fire();
  });
  const onAbort = () => latch.fire();
  abort.addEventListener('abort', onAbort);
  try {
    while (true) {
      if (superseded()) return null;
      let signals: AgentSignal[];
      try {
        signals = await store.deliveries.take(agentId, new Date().toISOString(), DELIVERY_BATCH);
      } catch (err) {
        // A session of the agent is open in another process on the same database.
        if (err instanceof AgentSessionOpenError) return null;
        throw err;
      }
      // A session that opened during the take pushes these same signals (they are not
      // acknowledged), so the poller must not get them as well.
      if (superseded()) return null;
      if (signals.length > 0 || board.closing || abort.aborted) return signals;
      const left = deadline - Date.now();
      if (left <= 0) return [];
      // Woken or not, a wait that ran out answers empty: the next poll takes what came since.
      if (!(await latch.wait(left)) || board.closing || abort.aborted) {
        return superseded() ? null : [];
      }
      // The token was rotated or the agent deleted during the wait: the next poll gets the 401.
      if (!(await stillAuthorized())) return [];
    }
  } finally {
    abort.removeEventListener('abort', onAbort);
    unwatch();
  }
}

/** The `wait` query parameter: seconds from 0 to 30 (fractions allowed), default 0; null when malformed. */
export function readWaitSeconds(raw: unknown): number | null {
  if (raw === undefined) return 0;
  if (typeof raw !== 'string' || !/^\d+(\.\d+)?$/.test(raw.trim())) return null;
  const seconds = Number(raw);
  return seconds <= MAX_WAIT_SECONDS ? seconds : null;
}
