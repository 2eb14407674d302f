import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { localTime, riskDayKey } from '../../src/risk/risk-day.js';

/**
 * UTC's wall clock is read from the instant, other zones through Intl. 'Etc/UTC' is the same zone
 * read through Intl, so the two must agree to the minute on every instant.
 */
describe('the day in UTC', () => {
  it('is what Intl reads for the same zone, at every instant from 1970 to 2200', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Date.parse('2200-01-01T00:00:00Z') }), (at) => {
        expect(localTime(at, 'UTC')).toEqual(localTime(at, 'Etc/UTC'));
      }),
      { numRuns: 2000 },
    );
  });

  it('at the edges of a day, a month, a leap day and a year', () => {
    for (const iso of [
      '2026-12-31T23:59:59.999Z',
      '2027-01-01T00:00:00.000Z',
      '2028-02-29T12:34:00.000Z',
      '2028-03-01T00:00:00.000Z',
      '1970-01-01T00:00:00.000Z',
    ]) {
      const at = Date.parse(iso);
      expect(localTime(at, 'UTC'), iso).toEqual(localTime(at, 'Etc/UTC'));
    }
    expect(localTime(Date.parse('2026-12-31T23:59:59.999Z'), 'UTC')).toEqual({
      date: '2026-12-31',
      weekday: 'thu',
      minutes: 1439,
      clock: '23:59',
    });
    expect(riskDayKey(Date.parse('2027-01-01T00:00:00Z'), null)).toBe('UTC 2027-01-01');
  });

  it('refuses an instant that is not a time, as Intl does', () => {
    expect(() => localTime(Number.NaN, 'Etc/UTC')).toThrow(RangeError);
    expect(() => localTime(Number.NaN, 'UTC')).toThrow(RangeError);
  });
});
