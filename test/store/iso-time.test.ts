import { describe, expect, it } from 'vitest';
import { isoTime } from '../../src/store/iso-time.js';

describe('isoTime: the one stored form of a time', () => {
  it('keeps a time already in the stored form as it is', () => {
    expect(isoTime('2026-11-22T10:00:00.123Z')).toBe('2026-11-22T10:00:00.123Z');
  });

  it('brings other forms of a time into the stored form', () => {
    expect(isoTime('2026-11-22T10:00:00Z')).toBe('2026-11-22T10:00:00.000Z');
    expect(isoTime('2026-11-22T11:00:00.000+01:00')).toBe('2026-11-22T10:00:00.000Z');
    expect(isoTime(new Date(Date.UTC(2026, 0, 2)))).toBe('2026-01-02T00:00:00.000Z');
  });

  it('does not keep a day the month does not have as if it were stored form', () => {
    expect(isoTime('2026-02-30T00:00:00.000Z')).toBe('2026-03-02T00:00:00.000Z');
    expect(isoTime('2026-01-01T24:00:00.000Z')).toBe('2026-01-02T00:00:00.000Z');
  });

  it('refuses what is not a time', () => {
    expect(() => isoTime('2026-13-01T00:00:00.000Z')).toThrow(RangeError);
    expect(() => isoTime('yesterday')).toThrow('not a time: yesterday');
  });
});
