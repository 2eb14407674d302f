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
 * Which agents hold the WebSocket push session in this server process: at most one each, so a
 * signal is never pushed to two processes sharing a token. A session that is closing (close
 * frame sent or received, or cut for a missed ping) no longer counts: nothing more is pushed
 * on it, so a replacement may start at once.
 */
export class AgentSessions {
  private readonly open = new Map<string, WebSocket>();

  /** Takes the agent's session for `ws`; false when another open connection holds it. */
  claim(agentId: string, ws: WebSocket): boolean {
    if (this.holds(agentId)) return false;
    this.open.set(agentId, ws);
    ws.once('close', () => {
      if (this.open.get(agentId) === ws) this.open.delete(agentId);
    });
    return true;
  }

  /** The agent has a WebSocket session that can still push. */
  holds(agentId: string): boolean {
    return this.open.get(agentId)?.readyState === WebSocket.OPEN;
  }
}
