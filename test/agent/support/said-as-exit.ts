import { expect } from 'vitest';
import type { AgentProcess } from './agent-process.js';

/**
 * The agent told of its position's end as an exit, not as a finding: nothing logged at warn or
 * above, and the account event of the position (its first) closed.
 */
export function expectSaidAsExit(agent: AgentProcess): void {
  expect(agent.lines().filter((l) => l.level >= 40)).toEqual([]);
  expect(
    agent.lines().some((l) => l.msg === 'account event' && l.event?.type === 'closed' && l.event.position === 1),
  ).toBe(true);
}
