import { WebSocket } from 'ws';
import { ErrorCode, type Problem } from '../errors/catalog.js';

/**
 * The problem a long-poll or state update gets while the agent has a WebSocket session open:
 * two processes on one token would each execute every signal.
 */
export const AGENT_CONNECTED_PROBLEM: Problem = {
  code: ErrorCode.AGENT_CONNECTED,
  detail:
    'another process is connected over WebSocket with this agent token, and one agent takes its signals over one connection; ' +
    'stop the other process (or give this one its own agent and token). Polling is accepted again once that connection closes',
};

/**
 * How long a poll, a state update or a new session waits for a closed session of the agent to
 * give its hold in the store back. Past it, the store's own answer decides (409 while held): a
 * peer that never finishes closing cannot hold a request up for longer.
 */
const HAND_BACK_WAIT_MS = 2_000;

/** One connection's place in `AgentSessions`, from its claim to the hand-back of its store hold. */
export interface SessionSlot {
  /** Resolves once the agent's earlier connections in this process have given their store holds back (or the wait ran out). */
  readonly earlier: Promise<void>;
  /**
   * Gives the connection's store hold back with `release` when it closes (at once if it already
   * has). Called once per claim, with a no-op when the store holds nothing for it: until then
   * the agent's later polls and sessions wait for it (at most HAND_BACK_WAIT_MS).
   */
  releaseOnClose(release: () => Promise<void>): void;
}

/**
 * Which agents hold the WebSocket push session in this server process: at most one each, so a
 * signal is never pushed to two processes sharing a token. A session that is closing (close
 * frame sent or received, or cut for a missed ping) no longer counts: nothing more is pushed
 * on it, so a replacement may start at once.
 *
 * The store holds the session too (against other processes on the same database), and that
 * hold is given back only after the connection has closed. An agent that closes its socket and
 * at once polls or reconnects would be refused for a hold that is on its way back, so those
 * wait for the hand-back of this process's own closed sessions first.
 */
export class AgentSessions {
  private readonly open = new Map<string, WebSocket>();
  /** Per agent, the last connection's hand-back: it resolves after that connection and every earlier one gave their holds back. */
  private readonly handBacks = new Map<string, Promise<void>>();

  /** Takes the agent's session for `ws`; null when another open connection holds it. */
  claim(agentId: string, ws: WebSocket): SessionSlot | null {
    if (this.holds(agentId)) return null;
    this.open.set(agentId, ws);
    const earlier = this.handBacks.get(agentId) ?? Promise.resolve();
    let release: (() => Promise<void>) | null = null;
    let closed = false;
    let handedBack!: () => void;
    const handBack = new Promise<void>((resolve) => (handedBack = resolve));
    const giveBack = () => void release!().then(handedBack, handedBack);
    // After the earlier ones: a wait on the newest hand-back then covers them all.
    const chained = Promise.all([earlier, handBack]).then(() => undefined);
    this.handBacks.set(agentId, chained);
    void chained.then(() => {
      if (this.handBacks.get(agentId) === chained) this.handBacks.delete(agentId);
    });
    ws.once('close', () => {
      if (this.open.get(agentId) === ws) this.open.delete(agentId);
      closed = true;
      if (release !== null) giveBack();
    });
    return {
      earlier: boundedWait(earlier),
      releaseOnClose: (give) => {
        release = give;
        if (closed) giveBack();
      },
    };
  }

  /** The agent has a WebSocket session that can still push. */
  holds(agentId: string): boolean {
    return this.open.get(agentId)?.readyState === WebSocket.OPEN;
  }

  /**
   * Resolves once the agent's sessions in this process that stopped pushing have closed and
   * given their store holds back (or the wait ran out). Only meaningful when `holds` is false.
   */
  settled(agentId: string): Promise<void> {
    const handBack = this.handBacks.get(agentId);
    return handBack === undefined ? Promise.resolve() : boundedWait(handBack);
  }
}

function boundedWait(done: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const ranOut = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, HAND_BACK_WAIT_MS);
    timer.unref();
  });
  return Promise.race([done, ranOut]).finally(() => clearTimeout(timer));
}
