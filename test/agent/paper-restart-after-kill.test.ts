import { describe, expect, it } from 'vitest';
import { accountWithAgents } from '../delivery/support/delivery-setup.js';
import { useAgentTestBed } from './support/agent-test-bed.js';
import { startUp } from './support/start-up.js';

/**
 * A paper agent killed with SIGKILL serves again within 5 s of being started anew, as a
 * supervisor restarts it: a deadline, so this file runs alone (vitest.config.ts), apart from the
 * rest of the restart tests in paper-restart.test.ts.
 */
describe('a paper agent killed with SIGKILL', () => {
  const bed = useAgentTestBed();

  it('is started again at once after SIGKILL, round after round, while a second live agent is refused', async () => {
    const {
      agents: [agent],
    } = await accountWithAgents(bed.server, ['paper']);
    const dir = bed.stateDir();
    for (let round = 0; round < 5; round++) {
      const running = bed.startAgent(bed.server.url, agent!.token, dir);
      const started = Date.now();
      expect(await startUp(running)).toBe('connected');
      expect(Date.now() - started, `round ${round}: connected after`).toBeLessThan(5_000);
      expect(running.lines().some((l) => l.msg.startsWith('took over'))).toBe(false);
      if (round === 0) {
        const rival = bed.startAgent(bed.server.url, agent!.token, dir);
        expect(await startUp(rival)).toBe(1);
        expect(rival.stderr).toContain(`another agent (pid ${running.child.pid}) is running`);
      }
      await running.kill();
    }
  });
});
