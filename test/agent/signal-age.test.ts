import { describe, expect, it } from 'vitest';
import { entriesOnly, entryDeadline } from '../../src/agent/signal-age.js';

const EXPIRES = '2026-12-02T01:00:00.000Z';
const at = (iso: string) => () => Date.parse(iso);

describe('the signal age rule', () => {
  it('lets an entry leave up to its expiry, and not a millisecond later', () => {
    expect(
      entryDeadline(EXPIRES, at('2026-12-02T00:59:59.999Z'), () => null).refusal('the buy market order of 0.1 EURUSD'),
    ).toBeNull();
    expect(entryDeadline(EXPIRES, at(EXPIRES), () => null).refusal('the buy market order of 0.1 EURUSD')).toBeNull();
    expect(
      entryDeadline(EXPIRES, at('2026-12-02T01:00:00.001Z'), () => null).refusal('the buy market order of 0.1 EURUSD'),
    ).toBe(
      'the signal expired at 2026-12-02T01:00:00.000Z before the buy market order of 0.1 EURUSD could be sent; it was not sent',
    );
  });

  it('names when the venue stopped answering, when it did while the signal waited', () => {
    const deadline = entryDeadline(EXPIRES, at('2026-12-02T03:00:00Z'), () => '2026-12-02T00:58:00.000Z');
    expect(deadline.refusal('the buy market order of 0.1 EURUSD')).toBe(
      'the signal expired at 2026-12-02T01:00:00.000Z while the venue was unreachable since 2026-12-02T00:58:00.000Z; the buy market order of 0.1 EURUSD was not sent',
    );
  });

  it('holds back only signals whose every step is an entry: closes, cancels and position targets are never refused for their age', () => {
    expect(entriesOnly({ symbol: 'EURUSD', action: 'buy' })).toBe(true);
    expect(entriesOnly({ symbol: 'EURUSD', action: 'selllimit', entry: { type: 'price', value: 1.2 } })).toBe(true);
    expect(entriesOnly({ symbol: 'EURUSD', action: 'buy', opposite: 'exit_and_enter' })).toBe(false);
    for (const action of [
      'closebuy',
      'closeall',
      'closelongsell',
      'cancellong',
      'positionflat',
      'positionlong',
    ] as const) {
      expect(entriesOnly({ symbol: 'EURUSD', action }), action).toBe(false);
    }
  });
});
