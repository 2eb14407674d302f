import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultInstrument } from '../../src/engine/index.js';
import { checkLots, floorToStep, partialCloseLots } from '../../src/engine/lots.js';

const eurusd = defaultInstrument('EURUSD')!;

describe('lot rounding', () => {
  it('floors to the step, never rounding up', () => {
    expect(floorToStep(0.499, 0.01)).toBe(0.49);
    expect(floorToStep(0.0999, 0.01)).toBe(0.09);
    expect(floorToStep(1.29, 0.1)).toBe(1.2);
    expect(floorToStep(7.9, 1)).toBe(7);
  });

  it('keeps volumes that are whole steps, despite binary floating point', () => {
    // 0.5 / 0.01 = 49.99999999999999 and 0.29 / 0.01 = 28.999999999999996 in floats
    expect(0.29 / 0.01).toBeLessThan(29);
    expect(floorToStep(0.29, 0.01)).toBe(0.29);
    expect(floorToStep(0.5, 0.01)).toBe(0.5);
    expect(floorToStep(0.1 + 0.2, 0.01)).toBe(0.3);
    expect(floorToStep(0.7, 0.1)).toBe(0.7);
  });

  it('maps every whole number of steps to itself (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), fc.constantFrom(0.01, 0.1, 0.001, 1, 0.05), (k, step) => {
        const decimal = Number((k * step).toFixed(3));
        return floorToStep(decimal, step) === decimal;
      }),
      { numRuns: 300 },
    );
  });

  it('rejects below the minimum with a reason, never rounding up', () => {
    expect(checkLots(0.009, eurusd)).toEqual({
      ok: false,
      reason: 'the volume 0.009 lots is below the minimum of 0.01 lots for EURUSD; it is not rounded up',
    });
    expect(checkLots(0.01, eurusd)).toEqual({ ok: true, lots: 0.01 });
  });

  it('rejects above the maximum with a reason', () => {
    expect(checkLots(100, eurusd)).toEqual({ ok: true, lots: 100 });
    expect(checkLots(100.01, eurusd)).toEqual({
      ok: false,
      reason: 'the volume 100.01 lots is above the maximum of 100 lots for EURUSD',
    });
  });
});

describe('partial close volumes', () => {
  const coarse = { ...eurusd, lotMin: 0.1, lotStep: 0.01 };

  it('closes the requested lots floored to the step', () => {
    expect(partialCloseLots(0.333, 1, eurusd)).toBe(0.33);
  });

  it('closes nothing when the request floors below the minimum lot', () => {
    expect(partialCloseLots(0.004, 0.01, eurusd)).toBe(0);
    expect(partialCloseLots(0.09, 1, coarse)).toBe(0);
  });

  it('closes everything when the rest would be below the minimum lot', () => {
    // 0.25 open, close 0.2 → 0.05 would stay, below the 0.1 minimum → all 0.25 close
    expect(partialCloseLots(0.2, 0.25, coarse)).toBe(0.25);
    // 0.35 open, close 0.2 → 0.15 stays, above the minimum
    expect(partialCloseLots(0.2, 0.35, coarse)).toBe(0.2);
  });

  it('closes everything when asked for at least the open volume', () => {
    expect(partialCloseLots(5, 0.3, eurusd)).toBe(0.3);
  });
});
