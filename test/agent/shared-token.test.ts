import { describe, expect, it } from 'vitest';
import {
  accountWithAgents,
  deliveriesOf,
  postSignal,
  sourceFor,
  waitUntil,
} from '../delivery/support/delivery-setup.js';
import type { AgentProcess } from './support/agent-process.js';
import { useAgentTestBed } from './support/agent-test-bed.js';
import { journalComments } from './support/journal-file.js';

const STANDBY = 'another process is connected with this agent token; waiting';

const handledIds = (agent: AgentProcess) => agent.handled().map((l) => l.signalId as string);

/**
 * The same agent token in two `signalgate agent --paper` processes (two machines, two data
 * directories): each signal must be executed once in all, not once per process.
 */
describe('two agent processes sharing one token', () => {
  const bed = useAgentTestBed();

  it('executes every signal once overall; the second process stands by and takes over when the first stops', async () => {
    const { server } = bed;
    const { accountId, agents } = await accountWithAgents(server, ['paper']);
    const agent = agents[0]!;
    const source = await sourceFor(server, accountId);
    const [dirA, dirB] = [bed.stateDir(), bed.stateDir()];

    const first = bed.startAgent(server.url, agent.token, dirA, ['--seed', '3']);
    await first.connected('websocket');
    const second = bed.startAgent(server.url, agent.token, dirB, ['--seed', '3']);
    await second.waitForLog((l) => l.msg === STANDBY, 'the second process to stand by');

    const ids: string[] = [];
    for (let i = 1; i <= 4; i += 1)
      ids.push(await postSignal(server.url, source.authKey, `EURUSD,buy,vol=0.1,comment=s${i}`));
    await waitUntil(
      async () =>
        (await Promise.all(ids.map((id) => deliveriesOf(server, id)))).every(([d]) => d.status === 'executed'),
      'every signal executed',
    );
    // Long enough for the standby to retry several times and to pass its 5 s publishing tick.
    await new Promise((resolve) => setTimeout(resolve, 6_000));

    expect(handledIds(first)).toEqual(ids);
    expect(handledIds(second)).toEqual([]);
    expect(journalComments(dirA, agent.token)).toEqual(['s1', 's2', 's3', 's4']);
    expect(journalComments(dirB, agent.token)).toEqual([]);
    // Neither fell back to long-poll, the standby never connected, and it said so once.
    for (const p of [first, second])
      expect(p.lines().some((l) => l.msg === 'WebSocket unavailable; falling back to long-poll')).toBe(false);
    expect(second.lines().filter((l) => l.msg === 'connected')).toEqual([]);
    expect(second.lines().filter((l) => l.msg === STANDBY)).toHaveLength(1);
    // The dashboard shows the account that executed them, not the standby's empty one. Published
    // after each ack, so waited for (one read each): the sleep above is for what must not happen.
    let published: any = null;
    await waitUntil(
      async () =>
        ((published = (await server.admin('GET', `/api/admin/agents/${agent.id}`)).body.state)?.positions?.length ??
          0) >= 4,
      'the four positions published',
    );
    expect(published.positions.map((p: { comment: string }) => p.comment)).toEqual(['s1', 's2', 's3', 's4']);

    expect((await first.stop()).code).toBe(0);
    await second.connected('websocket');
    expect(second.lines().some((l) => l.msg === 'the other connection with this agent token ended; taking over')).toBe(
      true,
    );
    const later = await postSignal(server.url, source.authKey, 'EURUSD,buy,vol=0.1,comment=s5');
    await second.waitForLog(
      (l) => l.msg === 'signal handled' && l.signalId === later,
      'the standby to execute the next signal',
    );
    await waitUntil(
      async () => (await deliveriesOf(server, later))[0].status === 'executed',
      'the next signal acknowledged',
    );

    expect(handledIds(first)).toEqual(ids);
    expect(handledIds(second)).toEqual([later]);
    await waitUntil(async () => journalComments(dirB, agent.token).length > 0, 'the second account written');
    expect(journalComments(dirB, agent.token)).toEqual(['s5']);
  });

  it('an agent on long-poll stands by too while another process holds the WebSocket session', async () => {
    const { server } = bed;
    const { accountId, agents } = await accountWithAgents(server, ['paper']);
    const agent = agents[0]!;
    const source = await sourceFor(server, accountId);

    const first = bed.startAgent(server.url, agent.token, bed.stateDir(), ['--seed', '3']);
    await first.connected('websocket');
    const polling = bed.startAgent(server.url, agent.token, bed.stateDir(), [
      '--seed',
      '3',
      '--transport',
      'long-poll',
    ]);
    await polling.waitForLog((l) => l.msg === STANDBY, 'the long-polling process to stand by');
    const id = await postSignal(server.url, source.authKey, 'EURUSD,buy,vol=0.1,comment=once');
    await waitUntil(async () => (await deliveriesOf(server, id))[0].status === 'executed', 'the signal executed');
    await new Promise((resolve) => setTimeout(resolve, 2_000));

    expect(handledIds(first)).toEqual([id]);
    expect(handledIds(polling)).toEqual([]);
    expect(polling.lines().filter((l) => l.msg === STANDBY)).toHaveLength(1);
    expect((await first.stop()).code).toBe(0);
    await polling.connected('long-poll');
  });
});
