import { describe, expect, it } from 'vitest';
import { SignalInbox } from '../../src/agent/signal-inbox.js';
import type { AgentSignal } from '../../src/protocol/agent-signal.js';

function delivery(id: string, seq: number): AgentSignal {
  return {
    id,
    seq,
    sourceId: 'src_1',
    receivedAt: '2026-12-04T00:00:00.000Z',
    expiresAt: '2026-12-04T00:05:00.000Z',
    signal: { symbol: 'EURUSD', action: 'buy' } as AgentSignal['signal'],
  };
}

describe('the agent inbox', () => {
  it('hands each signal over once, however often it is offered', async () => {
    const inbox = new SignalInbox();
    expect(inbox.offer([delivery('sig_1', 1), delivery('sig_2', 2)])).toBe(2);
    expect(inbox.offer([delivery('sig_1', 1)])).toBe(0);
    expect((await inbox.next()).value?.id).toBe('sig_1');
    expect((await inbox.next()).value?.id).toBe('sig_2');
  });

  it('takes nothing once ended: a signal that arrives during a stop is left to the next connection', async () => {
    const inbox = new SignalInbox();
    inbox.offer([delivery('sig_1', 1)]);
    inbox.end();
    // Dropped unacknowledged: the server hands it out again to the next connection.
    expect(inbox.offer([delivery('sig_2', 2)])).toBe(0);
    expect(await inbox.next()).toEqual({ value: undefined, done: true });
  });
});
