import { describe, expect, it } from 'vitest';
import { MAX_TP_LEVELS } from '../../src/language/parameter-table.js';
import { splitShares } from '../../src/language/tp-share-split.js';
import { codesOf, problemOf, problemsOf, signalOf } from './outcome.js';

const sharesOf = (body: string): number[] => signalOf(body).tp!.map((level) => level.pct);

describe('take profits', () => {
  it('makes a single tp_* one level closing 100%', () => {
    expect(signalOf('EURUSD,buy,tp_price=1.2').tp).toStrictEqual([{ type: 'price', value: 1.2, pct: 100 }]);
    expect(signalOf('EURUSD,buy,tp1=40').tp).toStrictEqual([{ type: 'pips', value: 40, pct: 100 }]);
  });

  it('reads a bare tp1 as pips and a bare tpN in the unit of tp1', () => {
    expect(signalOf('EURUSD,buy,tp1=10,tp2=20').tp).toStrictEqual([
      { type: 'pips', value: 10, pct: 50 },
      { type: 'pips', value: 20, pct: 50 },
    ]);
    expect(signalOf('EURUSD,buy,tp1_price=1.1,tp2=1.2,tp3_pips=80').tp).toStrictEqual([
      { type: 'price', value: 1.1, pct: 33 },
      { type: 'price', value: 1.2, pct: 33 },
      { type: 'pips', value: 80, pct: 34 },
    ]);
    expect(signalOf('EURUSD,buy,tp2_price=1.2,tp1_pips=10').tp).toStrictEqual([
      { type: 'pips', value: 10, pct: 50 },
      { type: 'price', value: 1.2, pct: 50 },
    ]);
  });

  it('orders levels by number, whatever the body order', () => {
    expect(signalOf('EURUSD,buy,tp3=30,tp1=10,tp2=20').tp!.map((level) => level.value)).toEqual([10, 20, 30]);
  });

  it('splits omitted shares as evenly as whole percents allow, the remainder to the last levels', () => {
    expect(sharesOf('EURUSD,buy,tp1=1,tp2=2,tp3=3')).toEqual([33, 33, 34]);
    expect(sharesOf('EURUSD,buy,tp1=1,tp2=2,tp3=3,tp4=4,tp5=5,tp6=6')).toEqual([16, 16, 17, 17, 17, 17]);
    expect(sharesOf('EURUSD,buy,tp1=1,tp2=2,tp3=3,tp4=4')).toEqual([25, 25, 25, 25]);
    expect(sharesOf('EURUSD,buy,tp1=1,tp2=2,tp3=3,tp4=4,tp5=5,tp6=6,tp7=7')).toEqual([14, 14, 14, 14, 14, 15, 15]);
  });

  it('splits the rest of 100 over the levels without a given share', () => {
    expect(sharesOf('EURUSD,buy,tp1=1,tp2=2,tp3=3,pct1=50')).toEqual([50, 25, 25]);
    expect(sharesOf('EURUSD,buy,tp1=1,tp2=2,tp3=3,tp4=4,pct2=10')).toEqual([30, 10, 30, 30]);
    expect(sharesOf('EURUSD,buy,tp1=1,tp2=2,tp3=3,pct3=51')).toEqual([24, 25, 51]);
  });

  it('keeps given shares that sum below 100 (the rest stays open)', () => {
    expect(sharesOf('EURUSD,buy,tp1=1,tp2=2,pct1=30,pct2=30')).toEqual([30, 30]);
    expect(sharesOf('EURUSD,buy,tp1=10,pct1=50')).toEqual([50]);
  });

  it('refuses shares summing above 100', () => {
    expect(problemOf('EURUSD,buy,tp1=1,tp2=2,pct2=60,pct1=50')).toEqual({
      code: 'INVALID_PARAMETER',
      param: 'pct1',
      detail: 'pct2 and pct1 add up to 110%; the take-profit shares may total at most 100',
    });
  });

  it('refuses shares that leave nothing (or less than 1%) for the levels without one', () => {
    expect(problemOf('EURUSD,buy,tp1=1,tp2=2,pct1=100').detail).toBe(
      'pct1 already gives away 100% of the position, leaving nothing for tp2; give pct2, or lower the other shares',
    );
    expect(problemOf('EURUSD,buy,tp1=1,tp2=2,tp3=3,pct1=50,pct2=50')).toEqual({
      code: 'INVALID_PARAMETER',
      param: 'tp3',
      detail:
        'pct1 and pct2 already give away 100% of the position, leaving nothing for tp3; give pct3, or lower the other shares',
    });
    expect(problemOf('EURUSD,buy,tp1=1,tp2=2,tp3=3,pct1=99')).toMatchObject({
      param: 'tp2',
      detail: 'pct1 leaves 1% for tp2 and tp3, less than 1% per level; give pct2 and pct3, or lower the other shares',
    });
  });

  it('refuses shares that are not whole percents from 1 to 100', () => {
    for (const value of ['0', '-5', '33.3', '101']) {
      expect(codesOf(`EURUSD,buy,tp1=1,tp2=2,pct1=${value}`)).toEqual([['INVALID_PARAMETER', 'pct1']]);
    }
    expect(problemOf('EURUSD,buy,tp1=1,pct1=33.3').detail).toBe('pct1 must be a whole percent from 1 to 100, got 33.3');
  });

  it('refuses a gap in the levels', () => {
    expect(problemOf('EURUSD,buy,tp1=10,tp3=30')).toEqual({
      code: 'INVALID_PARAMETER',
      param: 'tp3',
      detail: 'tp3 is given without tp2; number take-profit levels from tp1 on without gaps',
    });
    expect(problemOf('EURUSD,buy,tp2=20').detail).toBe(
      'tp2 is given without tp1; number take-profit levels from tp1 on without gaps',
    );
    expect(problemOf('EURUSD,buy,tp1=1,tp4=4').detail).toMatch(/^tp4 is given without tp2 and tp3;/);
    expect(codesOf('EURUSD,buy,tp2=2,tp4=4')).toEqual([
      ['INVALID_PARAMETER', 'tp2'],
      ['INVALID_PARAMETER', 'tp4'],
    ]);
  });

  it('refuses pctN without tpN', () => {
    expect(problemOf('EURUSD,buy,tp1=10,pct2=50')).toEqual({
      code: 'INVALID_PARAMETER',
      param: 'pct2',
      detail: 'pct2 is given without tp2; pct2 is the share of the position closed at take-profit level 2',
    });
    expect(problemOf('EURUSD,buy,pct1=50').code).toBe('INVALID_PARAMETER');
    expect(problemOf('EURUSD,buy,tp_pips=10,pct1=50').detail).toMatch(
      /with a single tp_pips the whole position closes at the target/,
    );
  });

  it('does not call tpN missing when it is given but refused beside a single target', () => {
    expect(problemsOf('EURUSD,buy,tp_pips=10,tp1=10,tp2=20,pct1=50')).toEqual([
      {
        code: 'INVALID_PARAMETER',
        param: 'tp1',
        detail:
          'tp1 and tp_pips are two ways of giving take profits; use one tp_* for a single target, or tp1, tp2 … for several levels',
      },
      {
        code: 'INVALID_PARAMETER',
        param: 'tp2',
        detail:
          'tp2 and tp_pips are two ways of giving take profits; use one tp_* for a single target, or tp1, tp2 … for several levels',
      },
      {
        code: 'INVALID_PARAMETER',
        param: 'pct1',
        detail:
          'pct1 is the share closed at tp1, but with a single tp_pips the whole position closes at the target; for partial targets use tp1, tp2 … with pct1, pct2 … and no tp_pips',
      },
    ]);
    expect(problemsOf('{"symbol":"EURUSD","action":"buy","tp":10,"tp1":10,"pct1":50}', 'json')).toEqual([
      expect.objectContaining({ param: 'tp1' }),
      {
        code: 'INVALID_PARAMETER',
        param: 'pct1',
        detail:
          'pct1 is the share closed at tp1, but with a single tp the whole position closes at the target; for partial targets use tp1, tp2 … with pct1, pct2 … and no tp',
      },
    ]);
  });

  it('refuses one level given twice', () => {
    expect(problemOf('EURUSD,buy,tp1=10,tp1_price=1.2')).toEqual({
      code: 'INVALID_PARAMETER',
      param: 'tp1_price',
      detail: 'tp1_price and tp1 both give take-profit level 1; give it once',
    });
  });

  it(`allows at most ${MAX_TP_LEVELS} levels`, () => {
    const levels = Array.from({ length: MAX_TP_LEVELS }, (_, index) => `tp${index + 1}=${index + 1}`).join(',');
    expect(sharesOf(`EURUSD,buy,${levels}`)).toEqual(Array(MAX_TP_LEVELS).fill(100 / MAX_TP_LEVELS));
    expect(problemOf(`EURUSD,buy,${levels},tp${MAX_TP_LEVELS + 1}=99`)).toMatchObject({
      code: 'INVALID_PARAMETER',
      param: `tp${MAX_TP_LEVELS + 1}`,
      detail: expect.stringMatching(/at most 10/),
    });
    expect(codesOf('EURUSD,buy,tp1=1,pct11=5')).toEqual([['INVALID_PARAMETER', 'pct11']]);
    expect(codesOf('EURUSD,buy,tp99999999999999999999=5')).toEqual([['INVALID_PARAMETER', 'tp99999999999999999999']]);
  });

  it('does not take tp0 or leading zeros as levels', () => {
    expect(codesOf('EURUSD,buy,tp0=5')).toEqual([['UNKNOWN_PARAMETER', 'tp0']]);
    expect(codesOf('EURUSD,buy,tp01=5')).toEqual([['UNKNOWN_PARAMETER', 'tp01']]);
  });
});

describe('splitShares', () => {
  it('splits whole percents evenly, the remainder one point each to the last', () => {
    expect(splitShares(100, 3)).toEqual([33, 33, 34]);
    expect(splitShares(100, 6)).toEqual([16, 16, 17, 17, 17, 17]);
    expect(splitShares(50, 2)).toEqual([25, 25]);
    expect(splitShares(7, 7)).toEqual([1, 1, 1, 1, 1, 1, 1]);
  });

  it('refuses a split that would leave a level below 1%', () => {
    expect(() => splitShares(2, 3)).toThrow(RangeError);
  });
});
