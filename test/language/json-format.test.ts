import { describe, expect, it } from 'vitest';
import { parseSignal } from '../../src/language/index.js';
import { MAX_JSON_NESTING } from '../../src/language/strict-json-reader.js';
import { codesOf, problemOf, problemsOf, signalOf } from './outcome.js';

const json = (members: string): string => `{"symbol":"EURUSD","action":"buy",${members}}`;

describe('the JSON format', () => {
  it('takes every text parameter under the same name (flat style)', () => {
    expect(
      signalOf(
        json(
          '"comment":"a, b","vol_pcteq":3,"sl_percent":0.5,"tp1_pips":10,"tp2":20,"pct1":70,"trail_trigger":5,"trail_distance":3,"be_trigger":4,"exop":true',
        ),
        'json',
      ),
    ).toStrictEqual({
      symbol: 'EURUSD',
      action: 'buy',
      comment: 'a, b',
      volume: { type: 'pcteq', value: 3 },
      sl: { type: 'percent', value: 0.5 },
      tp: [
        { type: 'pips', value: 10, pct: 70 },
        { type: 'pips', value: 20, pct: 30 },
      ],
      trail: { trigger: 5, distance: 3, step: 0 },
      breakeven: { trigger: 4, offset: 0 },
      opposite: 'exit',
    });
  });

  it('takes numbers as numeric strings, trimmed, and JSON numbers with exponents', () => {
    expect(signalOf(json('"vol":"0.10","sl_pips":" 20 "'), 'json')).toMatchObject({
      volume: { type: 'lots', value: 0.1 },
      sl: { type: 'pips', value: 20 },
    });
    expect(signalOf(json('"vol":1e-2'), 'json').volume?.value).toBe(0.01);
  });

  it('applies the text number rules to numeric strings', () => {
    expect(problemOf(json('"vol":"1e-2"'), 'json')).toMatchObject({
      code: 'INVALID_VOLUME',
      param: 'vol',
      detail: expect.stringMatching(/without an exponent/),
    });
    expect(problemOf(json('"sl_pips":"1,5"'), 'json').detail).toMatch(/point as decimal separator/);
    expect(problemOf(json('"sl_pips":"Infinity"'), 'json').code).toBe('INVALID_PARAMETER');
    expect(problemOf(json('"sl_pips":""'), 'json').detail).toMatch(/sl_pips has an empty value/);
  });

  it('takes a JSON number at its exact written value, with or without an exponent', () => {
    expect(
      signalOf(json('"vol_pctbal_loss":1e2,"sl_pips":0.30000000000000004,"tp_pips":2500E-2'), 'json'),
    ).toMatchObject({
      volume: { type: 'pctbal_loss', value: 100 },
      sl: { type: 'pips', value: 0.1 + 0.2 },
      tp: [{ type: 'pips', value: 25, pct: 100 }],
    });
    expect(signalOf(json('"vol":10.000e-1'), 'json').volume?.value).toBe(1);
  });

  it('refuses a JSON number or numeric string with more digits than a double holds exactly', () => {
    expect(problemOf(json('"vol_pctbal_loss":1.00000000000000000001e2,"sl_pips":10'), 'json')).toEqual({
      code: 'INVALID_VOLUME',
      param: 'vol_pctbal_loss',
      detail:
        'vol_pctbal_loss has more digits than can be held exactly (it would read as 100); write at most 15 significant digits',
    });
    expect(problemOf(json('"sl_pips":1e-400'), 'json').detail).toMatch(
      /^sl_pips is too small to be a usable number \(it would read as 0\)/,
    );
    expect(problemOf(json('"sl_price":123456789012345678'), 'json').code).toBe('INVALID_PARAMETER');
    expect(problemOf(json('"sl_price":"123456789012345678"'), 'json').code).toBe('INVALID_PARAMETER');
  });

  it('gives the same result as text for the same written number, as a literal or a numeric string', () => {
    const numbers = [
      '99.99999999999999999',
      '100.0000000000000001',
      '49.9999999999999999999',
      '0.10',
      '1.500',
      '123456789012345678',
      '0.30000000000000004',
    ];
    const companions: Record<string, [string, string]> = {
      sl_percent: ['', ''],
      vol_pctbal_loss: ['sl_pips=1,', '"sl_pips":1,'],
      pct1: ['tp1=10,tp2=20,', '"tp1":10,"tp2":20,'],
    };
    for (const [parameter, [inText, inJson]] of Object.entries(companions)) {
      for (const number of numbers) {
        const text = parseSignal(`EURUSD,buy,${inText}${parameter}=${number}`, 'text');
        expect(parseSignal(json(`${inJson}"${parameter}":${number}`), 'json')).toStrictEqual(text);
        expect(parseSignal(json(`${inJson}"${parameter}":"${number}"`), 'json')).toStrictEqual(text);
      }
    }
  });

  it('refuses a JSON number too large to be finite', () => {
    expect(problemOf(json('"sl_pips":1e400'), 'json')).toMatchObject({
      code: 'INVALID_PARAMETER',
      param: 'sl_pips',
      detail: expect.stringMatching(/too large/),
    });
  });

  it('refuses values of the wrong JSON type, naming the parameter', () => {
    const cases: [string, string, RegExp][] = [
      ['"sl_pips":{"value":20}', 'sl_pips', /sl_pips must be a number .* not an object/],
      ['"sl_pips":[20]', 'sl_pips', /not an array/],
      ['"sl_pips":true', 'sl_pips', /not true/],
      ['"sl_pips":null', 'sl_pips', /sl_pips is null; give a number \(like 20\) or leave sl_pips out/],
      ['"comment":42', 'comment', /comment must be a string .* not the number 42/],
      ['"comment":1.00000000000000000001', 'comment', /not the number 1\.00000000000000000001$/],
      ['"exop":"yes"', 'exop', /exop is a flag: give true .* not the string 'yes'/],
      ['"exop":1', 'exop', /exop is a flag/],
      ['"tp":[10,20]', 'tp', /for several take-profit levels use tp1, tp2/],
    ];
    for (const [member, param, detail] of cases) {
      const problem = problemOf(json(member), 'json');
      expect(problem).toMatchObject({ code: 'INVALID_PARAMETER', param });
      expect(problem.detail).toMatch(detail);
    }
    expect(problemOf(json('"vol":false'), 'json')).toMatchObject({ code: 'INVALID_VOLUME', param: 'vol' });
  });

  it('reads a flag as true, and false as not set', () => {
    expect(signalOf(json('"exent":true'), 'json').opposite).toBe('exit_and_enter');
    expect(signalOf(json('"exent":false'), 'json')).toStrictEqual({ symbol: 'EURUSD', action: 'buy' });
    expect(signalOf(json('"exop":false,"exent":true'), 'json').opposite).toBe('exit_and_enter');
    // false asks for nothing, so it conflicts with nothing, even where the flag would not apply.
    expect(signalOf('{"symbol":"EURUSD","action":"closeall","exop":false}', 'json')).toStrictEqual({
      symbol: 'EURUSD',
      action: 'closeall',
    });
  });

  describe('repeated keys', () => {
    it('are refused instead of keeping the last one', () => {
      expect(problemOf(json('"sl_pips":20,"sl_pips":2'), 'json')).toEqual({
        code: 'INVALID_PARAMETER',
        param: 'sl_pips',
        detail: 'sl_pips is given more than once (names are case-insensitive); give it once',
      });
    });

    it('are refused when they differ only in case', () => {
      expect(codesOf(json('"SL_PIPS":20,"sl_pips":20'), 'json')).toEqual([['INVALID_PARAMETER', 'sl_pips']]);
      expect(codesOf('{"symbol":"EURUSD","Symbol":"GBPUSD","action":"buy"}', 'json')).toEqual([
        ['INVALID_PARAMETER', 'symbol'],
      ]);
      expect(codesOf(json('"volumeType":"lots","VOLUMETYPE":"lots","volume":1'), 'json')).toEqual([
        ['INVALID_VOLUME', 'volumeType'],
      ]);
    });

    it('are refused for volumes as INVALID_VOLUME', () => {
      expect(codesOf(json('"vol":1,"VOL":1'), 'json')).toEqual([['INVALID_VOLUME', 'vol']]);
    });

    it('are refused when a key is spelled with escapes', () => {
      expect(codesOf(json('"sl_pips":20,"sl\\u005fpips":20'), 'json')).toEqual([['INVALID_PARAMETER', 'sl_pips']]);
    });

    it('are refused for flags set to false too', () => {
      expect(codesOf(json('"exop":false,"EXOP":true'), 'json')).toEqual([['INVALID_PARAMETER', 'exop']]);
    });
  });

  describe('the typed style', () => {
    it('defaults a missing type to lots and pips', () => {
      expect(signalOf(json('"volume":2,"sl":15,"tp":30'), 'json')).toStrictEqual({
        symbol: 'EURUSD',
        action: 'buy',
        volume: { type: 'lots', value: 2 },
        sl: { type: 'pips', value: 15 },
        tp: [{ type: 'pips', value: 30, pct: 100 }],
      });
    });

    it('takes every volume type and price unit, case-insensitively', () => {
      for (const type of ['lots', 'pctbal', 'pcteq', 'dollar', 'pctbal_loss', 'pcteq_loss']) {
        expect(
          signalOf(json(`"volume":5,"volumeType":"${type.toUpperCase()}","sl":1,"slType":"price"`), 'json').volume,
        ).toStrictEqual({ type, value: 5 });
      }
      for (const unit of ['pips', 'price', 'percent']) {
        const signal = signalOf(json(`"sl":5,"slType":"${unit}","tp":6,"tpType":" ${unit} "`), 'json');
        expect(signal.sl).toStrictEqual({ type: unit, value: 5 });
        expect(signal.tp).toStrictEqual([{ type: unit, value: 6, pct: 100 }]);
      }
    });

    it('refuses an unknown type, listing the allowed ones', () => {
      expect(problemOf(json('"volume":1,"volumeType":"lot"'), 'json')).toEqual({
        code: 'INVALID_VOLUME',
        param: 'volumeType',
        detail: "volumeType must be one of lots, pctbal, pcteq, dollar, pctbal_loss or pcteq_loss, got 'lot'",
      });
      expect(problemOf(json('"sl":1,"slType":"points"'), 'json')).toEqual({
        code: 'INVALID_PARAMETER',
        param: 'slType',
        detail: "slType must be one of pips, price or percent, got 'points'",
      });
      expect(problemOf(json('"tp":1,"tpType":7'), 'json')).toMatchObject({
        code: 'INVALID_PARAMETER',
        param: 'tpType',
      });
    });

    it('refuses a type without its value', () => {
      expect(problemOf(json('"volumeType":"lots"'), 'json')).toMatchObject({
        code: 'INVALID_VOLUME',
        param: 'volumeType',
        detail: expect.stringMatching(/without volume/),
      });
      expect(problemOf(json('"slType":"pips"'), 'json')).toMatchObject({
        code: 'INVALID_PARAMETER',
        param: 'slType',
        detail: expect.stringMatching(/without sl/),
      });
      expect(problemOf(json('"tpType":"pips"'), 'json')).toMatchObject({ code: 'INVALID_PARAMETER', param: 'tpType' });
    });

    it('refuses a typed key mixed with its flat twin', () => {
      expect(codesOf(json('"sl":20,"sl_pips":20'), 'json')).toEqual([['INVALID_PARAMETER', 'sl_pips']]);
      expect(codesOf(json('"tp_price":1.2,"tp":20'), 'json')).toEqual([['INVALID_PARAMETER', 'tp']]);
      expect(codesOf(json('"volume":1,"vol":1'), 'json')).toEqual([['INVALID_VOLUME', 'vol']]);
      expect(codesOf(json('"vol_pctbal":1,"volume":1,"volumeType":"pctbal"'), 'json')).toEqual([
        ['INVALID_VOLUME', 'volume'],
        ['INVALID_VOLUME', 'volumeType'],
      ]);
      expect(codesOf(json('"sl_pips":20,"slType":"price"'), 'json')).toEqual([['INVALID_PARAMETER', 'slType']]);
      expect(problemsOf(json('"sl":20,"sl_pips":20'), 'json')[0]!.detail).toMatch(
        /either sl with slType, or one of sl_pips/,
      );
    });

    it('refuses the typed tp with numbered levels', () => {
      expect(codesOf(json('"tp":20,"tp1":10'), 'json')).toEqual([['INVALID_PARAMETER', 'tp1']]);
    });
  });

  describe('symbol and action', () => {
    it('must be strings', () => {
      expect(codesOf('{"symbol":123,"action":"buy"}', 'json')).toEqual([['INVALID_PARAMETER', 'symbol']]);
      expect(codesOf('{"symbol":"EURUSD","action":["buy"]}', 'json')).toEqual([['INVALID_PARAMETER', 'action']]);
    });

    it('are missing when absent, null or blank', () => {
      expect(codesOf('{}', 'json')).toEqual([
        ['MISSING_SYMBOL', 'symbol'],
        ['MISSING_ACTION', 'action'],
      ]);
      expect(codesOf('{"symbol":null,"action":"  "}', 'json')).toEqual([
        ['MISSING_SYMBOL', 'symbol'],
        ['MISSING_ACTION', 'action'],
      ]);
      expect(problemOf('{"action":"buy"}', 'json').detail).toBe('symbol is missing; add it, like "symbol":"EURUSD"');
    });
  });

  describe('parse errors', () => {
    it('refuse a body that is not one JSON object', () => {
      for (const body of ['[1,2]', '"EURUSD,buy"', '42', 'null', 'true']) {
        expect(problemOf(body, 'json')).toMatchObject({
          code: 'PARSE_ERROR',
          detail: expect.stringMatching(/must be one JSON object/),
        });
      }
      expect(problemOf('', 'json')).toMatchObject({ code: 'PARSE_ERROR', detail: expect.stringMatching(/empty/) });
    });

    it('refuse malformed JSON, saying where', () => {
      const cases: [string, RegExp][] = [
        ['{"symbol":"EURUSD",}', /line 1, column 20: expected a quoted key but found '}'/],
        ['{"symbol":"EURUSD"', /expected ',' or '}' but found the end of the body/],
        ["{'symbol':'EURUSD'}", /expected a quoted key/],
        ['{"symbol":"EUR\nUSD"}', /control character inside a string/],
        ['{"symbol":"EURUSD","action":"buy"}\n{"x":1}', /unexpected text after the JSON object/],
        ['{"symbol":"EURUSD",\n "action":buy}', /line 2, column 11: expected a value/],
        ['{"a":"\\x"}', /invalid escape/],
        ['{"a":01}', /expected ',' or '}'/],
        ['{"a":.5}', /expected a value/],
        ['{"a":"b', /unterminated string/],
        ['{"a":[1,2}', /expected ',' or ']'/],
      ];
      for (const [body, detail] of cases) {
        const problem = problemOf(body, 'json');
        expect(problem.code).toBe('PARSE_ERROR');
        expect(problem.detail).toMatch(detail);
      }
    });

    it('refuse nesting deeper than the limit, and accept nesting within it as a wrongly typed value', () => {
      const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;
      expect(problemOf(json(`"x":${nested(MAX_JSON_NESTING)}`), 'json').code).toBe('PARSE_ERROR');
      expect(problemOf(json(`"sl_pips":${nested(MAX_JSON_NESTING - 2)}`), 'json')).toMatchObject({
        code: 'INVALID_PARAMETER',
        param: 'sl_pips',
      });
      expect(problemOf(json(`"x":${nested(100_000)}`), 'json').code).toBe('PARSE_ERROR');
    });

    it('are reported alone', () => {
      expect(problemsOf('{"symbol":"", "foo":1,', 'json')).toHaveLength(1);
    });
  });

  it('tolerates a leading byte order mark and surrounding white space', () => {
    expect(signalOf('\uFEFF \n {"symbol":"EURUSD","action":"buy"} \n', 'json')).toStrictEqual({
      symbol: 'EURUSD',
      action: 'buy',
    });
  });

  it('reports problems in the order the keys appear in the body', () => {
    expect(codesOf('{"sl_pip":1,"action":"buyy","vol":0,"symbol":"EUR USD"}', 'json')).toEqual([
      ['UNKNOWN_PARAMETER', 'sl_pip'],
      ['UNKNOWN_ACTION', 'action'],
      ['INVALID_VOLUME', 'vol'],
      ['INVALID_PARAMETER', 'symbol'],
    ]);
  });
});
