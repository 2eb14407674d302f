import { describe, expect, it } from 'vitest';
import { codesOf, problemOf, problemsOf, signalOf } from './outcome.js';

describe('the text format', () => {
  it('trims tokens, names and values and skips empty tokens after the action', () => {
    expect(signalOf('  EURUSD ,\tbuy , sl_pips = 20 ,, ,vol= 0.5 ,')).toStrictEqual({
      symbol: 'EURUSD',
      action: 'buy',
      volume: { type: 'lots', value: 0.5 },
      sl: { type: 'pips', value: 20 },
    });
  });

  it('reports an empty symbol or action as missing', () => {
    expect(codesOf(',buy')).toEqual([['MISSING_SYMBOL', 'symbol']]);
    expect(codesOf('  ,buy')).toEqual([['MISSING_SYMBOL', 'symbol']]);
    expect(codesOf('EURUSD')).toEqual([['MISSING_ACTION', 'action']]);
    expect(codesOf('EURUSD,')).toEqual([['MISSING_ACTION', 'action']]);
    expect(codesOf('EURUSD, ,sl_pips=20')).toEqual([['MISSING_ACTION', 'action']]);
    expect(codesOf(' , ,sl_pips=20')).toEqual([
      ['MISSING_SYMBOL', 'symbol'],
      ['MISSING_ACTION', 'action'],
    ]);
    expect(problemOf('EURUSD').detail).toMatch(/second token.*EURUSD,buy/);
  });

  it('accepts one line with a trailing newline, CRLF or surrounding blank lines', () => {
    expect(signalOf('EURUSD,buy\n').symbol).toBe('EURUSD');
    expect(signalOf('EURUSD,buy\r\n').symbol).toBe('EURUSD');
    expect(signalOf('\n  \nEURUSD,buy\n\n').symbol).toBe('EURUSD');
  });

  it('refuses more than one non-blank line as a parse error (one signal per request)', () => {
    for (const body of [
      'EURUSD,buy\nGBPUSD,sell',
      'EURUSD,buy\r\nGBPUSD,sell',
      'EURUSD,buy\rx',
      'EURUSD,buy\n\nsl_pips=20',
    ]) {
      const problem = problemOf(body);
      expect(problem.code).toBe('PARSE_ERROR');
      expect(problem.detail).toMatch(/2 non-blank lines; send exactly one signal per request/);
    }
  });

  it('says a body starting with a TradingView placeholder nobody filled in is one, rather than malformed JSON', () => {
    for (const format of ['text', 'json'] as const) {
      expect(problemOf('{{ticker}},positionlong,vol=1', format)).toEqual({
        code: 'PARSE_ERROR',
        detail:
          "the body starts with {{ticker}}, a TradingView placeholder that was not filled in: TradingView fills in only the placeholders it knows for the kind of alert (strategy.* only in strategy alerts); check the alert's message with signalgate parse or the dashboard's checker, which show what each placeholder becomes",
      });
    }
    expect(problemOf('{"symbol":"EURUSD",', 'json').detail).toMatch(/^malformed JSON/);
  });

  it('refuses an empty or blank body as a parse error', () => {
    for (const body of ['', '   ', '\n\n', '\uFEFF']) {
      expect(problemOf(body)).toMatchObject({ code: 'PARSE_ERROR', detail: expect.stringMatching(/empty/) });
    }
  });

  it('tolerates a leading byte order mark', () => {
    expect(signalOf('\uFEFFEURUSD,buy')).toStrictEqual({ symbol: 'EURUSD', action: 'buy' });
  });

  describe('quoted values', () => {
    it('may hold commas', () => {
      expect(signalOf('EURUSD,buy,comment="a, b",sl_pips=20')).toStrictEqual({
        symbol: 'EURUSD',
        action: 'buy',
        comment: 'a, b',
        sl: { type: 'pips', value: 20 },
      });
    });

    it('write a quote inside quotes twice', () => {
      expect(signalOf('EURUSD,buy,comment="say ""hi"", then go"').comment).toBe('say "hi", then go');
    });

    it('may stand after spaces and be followed by spaces', () => {
      expect(signalOf('EURUSD,buy,comment = "a,b"  ,vol=1').comment).toBe('a,b');
    });

    it('are trimmed like unquoted ones', () => {
      expect(signalOf('EURUSD,buy,comment="  padded  "').comment).toBe('padded');
    });

    it('may wrap a number', () => {
      expect(signalOf('EURUSD,buy,sl_pips="20"').sl).toStrictEqual({ type: 'pips', value: 20 });
    });

    it('wrapping a number are trimmed, as JSON numeric strings are', () => {
      expect(signalOf('EURUSD,buy,sl_pips=" 20 "').sl).toStrictEqual({ type: 'pips', value: 20 });
      expect(signalOf('EURUSD,buy,vol="\t0.5 "').volume).toStrictEqual({ type: 'lots', value: 0.5 });
      expect(problemOf('EURUSD,buy,sl_pips="  "').detail).toMatch(/^sl_pips has an empty value/);
    });

    it('must be closed', () => {
      const problem = problemOf('EURUSD,buy,comment="a, b');
      expect(problem.code).toBe('PARSE_ERROR');
      expect(problem.detail).toMatch(/unterminated quote in the value of 'comment'/);
    });

    it('end at the closing quote', () => {
      expect(problemOf('EURUSD,buy,comment="a"b').detail).toMatch(/text after the closing quote/);
      expect(problemOf('EURUSD,buy,comment="a" "b"').code).toBe('PARSE_ERROR');
    });

    it('only wrap whole values', () => {
      for (const body of [
        'EURUSD,buy,comment=a"b',
        '"EURUSD",buy',
        'EURUSD,"buy"',
        'EURUSD,buy,"comment"=x',
        'EURUSD,buy,"exop"',
      ]) {
        const problem = problemOf(body);
        expect(problem.code).toBe('PARSE_ERROR');
        expect(problem.detail).toMatch(/quotes may only wrap a whole value/);
      }
    });

    it('are reported alone when broken, whatever else is wrong', () => {
      expect(problemsOf('EURUSD,nope,foo=1,comment="open')).toHaveLength(1);
    });
  });

  describe('numbers', () => {
    it('are plain decimals, with an optional sign, leading zeros or leading point', () => {
      expect(signalOf('EURUSD,buy,vol=.5').volume?.value).toBe(0.5);
      expect(signalOf('EURUSD,buy,vol=+0.25').volume?.value).toBe(0.25);
      expect(signalOf('EURUSD,buy,vol=007').volume?.value).toBe(7);
      expect(signalOf('EURUSD,buy,sl_price=1.08505').sl?.value).toBe(1.08505);
    });

    it('refuse exponents, hex, Infinity, NaN and other non-decimals, naming the parameter and the value', () => {
      const cases: [string, RegExp][] = [
        ['1e3', /sl_pips must be a plain decimal number without an exponent, got '1e3'/],
        ['2E-1', /without an exponent/],
        ['0x10', /sl_pips must be a decimal number like 20 or 0.5, got '0x10'/],
        ['Infinity', /got 'Infinity'/],
        ['-Infinity', /got '-Infinity'/],
        ['NaN', /got 'NaN'/],
        ['1.2.3', /got '1.2.3'/],
        ['1 000', /got '1 000'/],
        ['1_000', /got '1_000'/],
        ['5.', /got '5.'/],
        ['twenty', /got 'twenty'/],
      ];
      for (const [value, detail] of cases) {
        const problem = problemOf(`EURUSD,buy,sl_pips=${value}`);
        expect(problem).toMatchObject({ code: 'INVALID_PARAMETER', param: 'sl_pips' });
        expect(problem.detail).toMatch(detail);
      }
    });

    it('refuse a decimal comma with a hint, since the comma splits tokens', () => {
      expect(problemOf('EURUSD,buy,sl_pips=1,5')).toEqual({
        code: 'UNKNOWN_PARAMETER',
        param: '5',
        detail: "unknown parameter '5'; if you meant sl_pips=1.5, write decimals with a point, not a comma",
      });
      expect(problemOf('EURUSD,buy,sl_pips="1,5"').detail).toBe(
        "sl_pips must use a point as decimal separator: if you meant 1.5, write that, got '1,5'",
      );
    });

    it('are taken at their exact written value, however they are written', () => {
      expect(signalOf('EURUSD,buy,vol=0.10').volume?.value).toBe(0.1);
      expect(signalOf('EURUSD,buy,vol=+1').volume?.value).toBe(1);
      expect(signalOf('EURUSD,buy,vol=1.500').volume?.value).toBe(1.5);
      expect(signalOf('EURUSD,buy,vol=0000.5000').volume?.value).toBe(0.5);
      // The shortest digits of 0.1 + 0.2 are exactly what that double holds.
      expect(signalOf('EURUSD,buy,sl_pips=0.30000000000000004').sl?.value).toBe(0.1 + 0.2);
      expect(signalOf('EURUSD,buy,sl_price=123456789012345.6').sl?.value).toBe(123456789012345.6);
    });

    it('refuse more digits than a double holds exactly, instead of rounding them away', () => {
      expect(problemOf('EURUSD,buy,sl_percent=99.99999999999999999')).toEqual({
        code: 'INVALID_PARAMETER',
        param: 'sl_percent',
        detail:
          'sl_percent has more digits than can be held exactly (it would read as 100); write at most 15 significant digits',
      });
      expect(problemOf('EURUSD,buy,vol_pctbal_loss=100.0000000000000001,sl_pips=10')).toEqual({
        code: 'INVALID_VOLUME',
        param: 'vol_pctbal_loss',
        detail:
          'vol_pctbal_loss has more digits than can be held exactly (it would read as 100); write at most 15 significant digits',
      });
      expect(problemOf('EURUSD,closeall,pct=100.0000000000000000001')).toMatchObject({
        code: 'INVALID_PARAMETER',
        param: 'pct',
      });
      expect(problemOf('EURUSD,buy,tp1=10,tp2=20,pct1=49.9999999999999999999')).toMatchObject({
        code: 'INVALID_PARAMETER',
        param: 'pct1',
        detail: expect.stringMatching(/^pct1 has more digits than can be held exactly \(it would read as 50\)/),
      });
      expect(problemOf('EURUSD,buy,sl_price=123456789012345678').detail).toMatch(
        /it would read as 123456789012345680\)/,
      );
      expect(problemOf('EURUSD,buy,sl_pips="0.1000000000000000055511151231257827"').code).toBe('INVALID_PARAMETER');
    });

    it('refuse numbers too small to be held, rather than suggest fewer digits', () => {
      expect(problemOf(`EURUSD,buy,sl_pips=0.${'0'.repeat(400)}1`).detail).toMatch(
        /^sl_pips is too small to be a usable number \(it would read as 0\), got '0\.000/,
      );
    });

    it('refuse numbers too large to be finite', () => {
      expect(problemOf(`EURUSD,buy,sl_price=1${'0'.repeat(400)}`).detail).toMatch(/sl_price is too large/);
    });
  });

  describe('names and values', () => {
    it('need a value unless the name is a flag', () => {
      expect(problemOf('EURUSD,buy,sl_pips')).toEqual({
        code: 'INVALID_PARAMETER',
        param: 'sl_pips',
        detail: 'sl_pips needs a value, e.g. sl_pips=20',
      });
      expect(problemOf('EURUSD,buy,comment')).toMatchObject({ code: 'INVALID_PARAMETER', param: 'comment' });
      expect(problemOf('EURUSD,buy,vol')).toMatchObject({
        code: 'INVALID_VOLUME',
        param: 'vol',
        detail: 'vol needs a value, e.g. vol=0.1',
      });
    });

    it('refuse an empty value after =', () => {
      expect(problemOf('EURUSD,buy,sl_pips=')).toEqual({
        code: 'INVALID_PARAMETER',
        param: 'sl_pips',
        detail: 'sl_pips has an empty value; give a number (e.g. sl_pips=20) or leave sl_pips out',
      });
      expect(problemOf('EURUSD,buy,sl_pips=""')).toMatchObject({ code: 'INVALID_PARAMETER', param: 'sl_pips' });
      expect(problemOf('EURUSD,buy,comment=')).toMatchObject({
        code: 'INVALID_PARAMETER',
        param: 'comment',
        detail: expect.stringMatching(/comment is empty/),
      });
      expect(problemOf('EURUSD,buy,comment=""')).toMatchObject({ code: 'INVALID_PARAMETER', param: 'comment' });
    });

    it('refuse a flag given a value', () => {
      expect(problemOf('EURUSD,buy,exop=true')).toEqual({
        code: 'INVALID_PARAMETER',
        param: 'exop',
        detail: 'exop is a flag and takes no value; write just exop, not exop=true',
      });
      expect(problemOf('EURUSD,buy,exent=')).toMatchObject({ code: 'INVALID_PARAMETER', param: 'exent' });
    });

    it('refuse a value without a name as a parse error', () => {
      expect(problemOf('EURUSD,buy,=20')).toMatchObject({
        code: 'PARSE_ERROR',
        detail: expect.stringMatching(/token 3 .* has a value but no name/),
      });
    });

    it('split at the first =', () => {
      expect(signalOf('EURUSD,buy,comment=a=b').comment).toBe('a=b');
    });

    it('refuse symbol= and action= after the first two tokens', () => {
      expect(problemOf('EURUSD,buy,symbol=GBPUSD')).toMatchObject({
        code: 'INVALID_PARAMETER',
        param: 'symbol',
        detail: expect.stringMatching(/the symbol is the first token itself/),
      });
      expect(problemOf('EURUSD,buy,action=sell')).toMatchObject({ code: 'INVALID_PARAMETER', param: 'action' });
    });

    it('explain the positions to a sender who writes symbol=… first', () => {
      const problems = problemsOf('symbol=EURUSD,action=buy');
      expect(problems.map((p) => p.code)).toEqual(['INVALID_PARAMETER', 'UNKNOWN_ACTION']);
      expect(problems[0]!.detail).toMatch(/starts with the symbol itself, like EURUSD,buy/);
      expect(problems[1]!.detail).toMatch(/the second token is the action itself/);
    });

    it('do not know the JSON typed keys, and suggest the flat names', () => {
      expect(problemOf('EURUSD,buy,sl=20')).toEqual({
        code: 'UNKNOWN_PARAMETER',
        param: 'sl',
        detail: "unknown parameter 'sl'; did you mean sl_pips, sl_price or sl_percent?",
      });
      // The typed key lists its whole mapping, beyond the usual four suggestions.
      expect(problemOf('EURUSD,buy,volume=0.1').detail).toBe(
        "unknown parameter 'volume'; did you mean vol, vol_pctbal, vol_pcteq, vol_dollar, vol_pctbal_loss or vol_pcteq_loss?",
      );
      expect(problemOf('EURUSD,buy,tp=40').detail).toMatch(/did you mean tp_pips, tp_price or tp_percent\?/);
      expect(problemOf('EURUSD,buy,slType=pips')).toMatchObject({ code: 'UNKNOWN_PARAMETER', param: 'sltype' });
    });

    it('suggest the names an unknown name is the end of', () => {
      expect(problemOf('EURUSD,buy,lots=1').detail).toBe(
        "unknown parameter 'lots'; did you mean vol_lots or pct_lots?",
      );
    });
  });
});

describe("TradingView's symbol forms", () => {
  it('are taken as written, prefix and suffix kept, so the log shows what the sender sent', () => {
    for (const symbol of ['BINANCE:BTCUSDT', 'OANDA:EURUSD', 'BTCUSDT.P', 'ES1!', 'BINANCE:BTCUSDT.P']) {
      expect(signalOf(`${symbol},buy`).symbol).toBe(symbol);
      expect(signalOf(JSON.stringify({ symbol, action: 'buy' }), 'json').symbol).toBe(symbol);
    }
  });
});
