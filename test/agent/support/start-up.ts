import type { AgentProcess } from './agent-process.js';

/**
 * How a start-up ends: the exit code when the agent exits before it connects, or 'connected'
 * when it went on to run (and so did not refuse).
 */
export async function startUp(agent: AgentProcess): Promise<number | null | 'connected'> {
  const outcome = await Promise.race([
    agent.exited.then((e) => e.code),
    agent.connected().then(
      () => 'connected' as const,
      () => agent.exited.then((e) => e.code),
    ),
  ]);
  // 'exit' may come before the last of stderr: wait for its end, so the message is whole.
  const stderr = agent.child.stderr!;
  if (outcome !== 'connected' && !stderr.readableEnded) await new Promise((resolve) => stderr.once('end', resolve));
  return outcome;
}
