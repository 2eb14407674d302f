/**
 * A poll's hand-out refused because the agent has a WebSocket session open in another process
 * on the same database: one agent, one receiver.
 */
export class AgentSessionOpenError extends Error {
  constructor(readonly agentId: string) {
    super(`agent ${agentId} has a WebSocket session open in another signalgate process`);
    this.name = 'AgentSessionOpenError';
  }
}
