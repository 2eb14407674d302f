import { describe, expect, it } from 'vitest';
import { SymbolFailures } from '../../src/agent/symbol-failures.js';

describe('failing symbols of a management pass', () => {
  it('logs a failure once, again when its message changes or a minute later, and forgets it when the symbol works again', () => {
    const failures = new SymbolFailures();
    const t0 = Date.parse('2026-12-02T01:00:00Z');
    expect(failures.failed('GBPUSD', 'market data refused', t0)).toBe(true);
    expect(failures.failed('GBPUSD', 'market data refused', t0 + 2000)).toBe(false);
    expect(failures.failed('GBPUSD', 'no quote within 5 s', t0 + 4000)).toBe(true);
    expect(failures.failed('GBPUSD', 'no quote within 5 s', t0 + 63_999)).toBe(false);
    expect(failures.failed('GBPUSD', 'no quote within 5 s', t0 + 64_000)).toBe(true);
    expect(failures.list()).toEqual([
      { symbol: 'GBPUSD', error: 'no quote within 5 s', since: '2026-12-02T01:00:00.000Z', failures: 5 },
    ]);
    expect(failures.succeeded('EURUSD')).toBeNull();
    expect(failures.succeeded('GBPUSD')).toMatchObject({ failures: 5 });
    expect(failures.list()).toEqual([]);
  });

  it('forgets symbols the book no longer holds', () => {
    const failures = new SymbolFailures();
    failures.failed('GBPUSD', 'refused', 0);
    failures.failed('EURUSD', 'refused', 0);
    failures.keepOnly(new Set(['EURUSD']));
    expect(failures.list().map((f) => f.symbol)).toEqual(['EURUSD']);
  });
});
