import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSignal, type SignalFormat } from '../../src/language/index.js';
import { problemOf } from './outcome.js';

/**
 * A hint may offer the sender a corrected value only when every plausible reading of what they
 * wrote agrees on it: `39,000` may be 39000 (thousands separator) or 39.0 (decimal comma), so
 * offering `39.000` would put a stop a thousandfold away from where one of them meant it.
 */

/** The fixed examples details give whatever the input (e.g. `like 20 or 0.5`): not derived from it. */
const EXAMPLES = new Set(['20', '0.5', '0.1', '50', '1.0850']);

/** Every number a detail offers as what to write. */
function proposals(detail: string): string[] {
  return [...detail.matchAll(/(?:if you meant|write|e\.g\.|like)\s+(?:[A-Za-z_0-9]+=)?([+-]?\d+(?:\.\d+)?)/g)].map(
    (m) => m[1]!,
  );
}

/** The values a person may have meant by a number written with commas. */
function plausibleReadings(written: string): number[] {
  const readings: number[] = [];
  if (/^[+-]?\d+,\d+$/.test(written)) readings.push(Number(written.replace(',', '.')));
  if (/^[+-]?[1-9]\d*(?:,\d{3})+(?:\.\d+)?$/.test(written)) readings.push(Number(written.replaceAll(',', '')));
  return readings;
}

const NUMBER_PARAMS = [
  'sl_pips',
  'sl_price',
  'tp_price',
  'entry_price',
  'vol',
  'vol_pctbal_loss',
  'trail_distance',
  'be_offset',
  'pct',
];

const commaNumber = fc
  .record({
    sign: fc.constantFrom('', '+', '-'),
    whole: fc.stringMatching(/^\d{1,6}$/),
    groups: fc.array(fc.stringMatching(/^\d{1,4}$/), { minLength: 1, maxLength: 3 }),
    fraction: fc.option(fc.stringMatching(/^\d{1,3}$/), { nil: undefined }),
  })
  .map(
    ({ sign, whole, groups, fraction }) =>
      `${sign}${whole},${groups.join(',')}${fraction === undefined ? '' : `.${fraction}`}`,
  );

function bodies(param: string, written: string): Array<[string, SignalFormat]> {
  return [
    [`EURUSD,buy,${param}=${written}`, 'text'],
    [`EURUSD,buy,${param}="${written}"`, 'text'],
    [JSON.stringify({ symbol: 'EURUSD', action: 'buy', [param]: written }), 'json'],
  ];
}

describe('hints about numbers written with commas', () => {
  it('never offer a value that differs from a plausible reading of the input', () => {
    fc.assert(
      fc.property(fc.constantFrom(...NUMBER_PARAMS), commaNumber, (param, written) => {
        const readings = plausibleReadings(written);
        for (const [body, format] of bodies(param, written)) {
          const outcome = parseSignal(body, format);
          expect(outcome.ok).toBe(false);
          if (outcome.ok) continue;
          for (const problem of outcome.problems) {
            for (const offered of proposals(problem.detail)) {
              if (EXAMPLES.has(offered)) continue;
              // Offered only when the input has readings and they all agree on this value.
              expect(readings.length, `${body}: ${problem.detail}`).toBeGreaterThan(0);
              for (const reading of readings) expect(Number(offered), `${body}: ${problem.detail}`).toBe(reading);
            }
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('say that commas separate parameters and numbers take no thousands separator, for sl_price=39,000', () => {
    expect(problemOf('EURUSD,buy,sl_price=39,000')).toEqual({
      code: 'UNKNOWN_PARAMETER',
      param: '000',
      detail:
        "unknown parameter '000'; commas separate parameters, so sl_price=39,000 was read as sl_price=39 followed by 000: write numbers without a thousands separator, and decimals with a point",
    });
    const quoted =
      "sl_price must be a plain number: numbers take no thousands separator, and decimals use a point, got '39,000'";
    expect(problemOf('EURUSD,buy,sl_price="39,000"').detail).toBe(quoted);
    expect(problemOf(JSON.stringify({ symbol: 'EURUSD', action: 'buy', sl_price: '39,000' }), 'json').detail).toBe(
      quoted,
    );
    expect(
      problemOf(JSON.stringify({ symbol: 'EURUSD', action: 'buy', sl_price: '1,000,000.5' }), 'json').detail,
    ).toMatch(/no thousands separator/);
  });

  it('still offer the value with a point where only a decimal comma can be meant', () => {
    expect(problemOf('EURUSD,buy,sl_pips=1,5').detail).toBe(
      "unknown parameter '5'; if you meant sl_pips=1.5, write decimals with a point, not a comma",
    );
    expect(problemOf('EURUSD,buy,sl_pips="1,5"').detail).toBe(
      "sl_pips must use a point as decimal separator: if you meant 1.5, write that, got '1,5'",
    );
    expect(problemOf('EURUSD,buy,vol="0,500"').detail).toMatch(/if you meant 0\.500, write that/);
  });
});
