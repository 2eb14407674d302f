import { describe, expect, it } from 'vitest';
import { COMMENT_MAX_CHARACTERS } from '../../src/language/comment-rules.js';
import { SYMBOL_MAX_LENGTH } from '../../src/language/symbol-rules.js';
import { codesOf, problemOf, problemsOf, signalOf } from './outcome.js';

describe('validation', () => {
  describe('UNKNOWN_ACTION', () => {
    it('refuses an action outside the list, suggesting near ones', () => {
      expect(problemOf('EURUSD,buyy')).toEqual({
        code: 'UNKNOWN_ACTION',
        param: 'action',
        detail: "unknown action 'buyy'; did you mean buy?",
      });
      expect(problemOf('EURUSD,Close_All').detail).toBe("unknown action 'close_all'; did you mean closeall?");
      expect(problemOf('EURUSD,hodl').detail).toMatch(/^unknown action 'hodl'; use one of buy, sell, closebuy/);
    });
  });

  describe('UNKNOWN_PARAMETER', () => {
    it('is never ignored: a mistyped stop must not open a trade without one', () => {
      expect(problemOf('EURUSD,buy,sl_pip=20')).toEqual({
        code: 'UNKNOWN_PARAMETER',
        param: 'sl_pip',
        detail: "unknown parameter 'sl_pip'; did you mean sl_pips?",
      });
      expect(problemOf('{"symbol":"EURUSD","action":"buy","sl_pip":20}', 'json').code).toBe('UNKNOWN_PARAMETER');
    });

    it('suggests by family, edit distance and prefix', () => {
      expect(problemOf('EURUSD,buy,tp2_pip=20').detail).toBe("unknown parameter 'tp2_pip'; did you mean tp2_pips?");
      expect(problemOf('EURUSD,buy,trail_dist=5').detail).toBe(
        "unknown parameter 'trail_dist'; did you mean trail_distance?",
      );
      expect(problemOf('EURUSD,buy,be_ofset=1').detail).toBe("unknown parameter 'be_ofset'; did you mean be_offset?");
      expect(problemOf('EURUSD,buy,entry=1').detail).toBe(
        "unknown parameter 'entry'; did you mean entry_pips, entry_price or entry_percent?",
      );
      expect(problemOf('EURUSD,buy,stoploss=1').detail).toBe(
        "unknown parameter 'stoploss'; it is not a signal parameter, so check its spelling or remove it",
      );
      expect(problemOf('{"symbol":"EURUSD","action":"buy","volumtype":"lots"}', 'json').detail).toMatch(
        /did you mean volumeType/,
      );
    });

    it('is reported for every unknown name, a repeated one once', () => {
      expect(codesOf('EURUSD,buy,foo,bar=1,foo,baz')).toEqual([
        ['UNKNOWN_PARAMETER', 'foo'],
        ['UNKNOWN_PARAMETER', 'bar'],
        ['UNKNOWN_PARAMETER', 'baz'],
      ]);
    });

    it('does not take inherited object names for parameters', () => {
      expect(codesOf('EURUSD,buy,constructor=1,__proto__=2,toString')).toEqual([
        ['UNKNOWN_PARAMETER', 'constructor'],
        ['UNKNOWN_PARAMETER', '__proto__'],
        ['UNKNOWN_PARAMETER', 'tostring'],
      ]);
    });

    it('does not fold Unicode look-alikes into known names', () => {
      // U+017F LATIN SMALL LETTER LONG S upper-cases to S; U+212A KELVIN SIGN lower-cases to k.
      expect(problemOf('EURUSD,buy,\u017Fl_pips=20').code).toBe('UNKNOWN_PARAMETER');
      expect(problemOf('EURUSD,buy,\u212Aey=1').code).toBe('UNKNOWN_PARAMETER');
    });

    it('suggests for the first 32 unknown names of a body only (a garbage body cannot buy much CPU)', () => {
      const names = Array.from({ length: 40 }, (_, index) => `sl_pip${index}`);
      const problems = problemsOf(`EURUSD,buy,${names.map((name) => `${name}=1`).join(',')}`);
      expect(problems.map((problem) => [problem.code, problem.param])).toEqual(
        names.map((name) => ['UNKNOWN_PARAMETER', name]),
      );
      expect(problems.slice(0, 32).every((problem) => /did you mean sl_pips\?$/.test(problem.detail))).toBe(true);
      expect(problems.slice(32).every((problem) => /it is not a signal parameter/.test(problem.detail))).toBe(true);
    });

    it('cuts a very long unknown name short in the detail and escapes invisible characters', () => {
      const problem = problemOf(`EURUSD,buy,${'x'.repeat(5000)}=1`);
      expect(problem.detail.length).toBeLessThan(200);
      expect(problemOf('EURUSD,buy,a\u0000b=1').detail).toContain("'a\\u0000b'");
    });
  });

  describe('INVALID_VOLUME', () => {
    it('refuses a volume that is not a finite number above 0', () => {
      for (const value of ['0', '-1', '-0', 'abc', '1e2']) {
        expect(problemOf(`EURUSD,buy,vol=${value}`)).toMatchObject({ code: 'INVALID_VOLUME', param: 'vol' });
      }
      expect(problemOf('EURUSD,buy,vol_pctbal=0').detail).toBe('vol_pctbal must be greater than 0, got 0');
      expect(problemOf('{"symbol":"EURUSD","action":"buy","volume":-2,"volumeType":"pcteq"}', 'json').detail).toBe(
        'volume (pcteq) must be greater than 0, got -2',
      );
    });

    it('refuses more than one volume parameter', () => {
      expect(problemOf('EURUSD,buy,vol=1,vol_lots=1')).toEqual({
        code: 'INVALID_VOLUME',
        param: 'vol_lots',
        detail: 'vol_lots and vol both give the volume; give only one volume parameter',
      });
      expect(codesOf('EURUSD,buy,vol_pctbal=1,vol_pcteq=1,vol_dollar=5,sl_pips=1')).toEqual([
        ['INVALID_VOLUME', 'vol_pcteq'],
        ['INVALID_VOLUME', 'vol_dollar'],
      ]);
    });

    it('refuses a risk above 100% of balance or equity', () => {
      expect(problemOf('EURUSD,buy,vol_pctbal_loss=100.5,sl_pips=10')).toEqual({
        code: 'INVALID_VOLUME',
        param: 'vol_pctbal_loss',
        detail: 'vol_pctbal_loss risks 100.5% of the balance on one trade; give at most 100',
      });
      expect(problemOf('EURUSD,buy,vol_pcteq_loss=150,sl_pips=10').code).toBe('INVALID_VOLUME');
      expect(signalOf('EURUSD,buy,vol_pcteq_loss=100,sl_pips=10').volume).toStrictEqual({
        type: 'pcteq_loss',
        value: 100,
      });
      // Notional percent may exceed 100 with leverage.
      expect(signalOf('EURUSD,buy,vol_pctbal=500').volume).toStrictEqual({ type: 'pctbal', value: 500 });
    });
  });

  describe('SL_REQUIRED', () => {
    it('refuses risk-based sizing without a stop loss', () => {
      for (const name of ['vol_dollar', 'vol_pctbal_loss', 'vol_pcteq_loss']) {
        expect(problemOf(`EURUSD,buy,${name}=1`)).toEqual({
          code: 'SL_REQUIRED',
          param: name,
          detail: `${name} sizes the trade from the loss at the stop loss, so it needs one: add sl_pips, sl_price or sl_percent`,
        });
        for (const stop of ['sl_pips=10', 'sl_price=1.05', 'sl_percent=1']) {
          expect(signalOf(`EURUSD,buy,${name}=1,${stop}`).volume?.value).toBe(1);
        }
      }
      expect(problemOf('{"symbol":"EURUSD","action":"sell","volume":100,"volumeType":"dollar"}', 'json')).toMatchObject(
        {
          code: 'SL_REQUIRED',
          param: 'volume',
        },
      );
      expect(
        signalOf('{"symbol":"EURUSD","action":"sell","volume":100,"volumeType":"dollar","sl":20}', 'json').volume,
      ).toStrictEqual({
        type: 'dollar',
        value: 100,
      });
    });

    it('is not needed for fixed lots or notional percent', () => {
      expect(signalOf('EURUSD,buy,vol=1').volume).toBeDefined();
      expect(signalOf('EURUSD,buy,vol_pcteq=1').volume).toBeDefined();
    });
  });

  describe('ENTRY_REQUIRED', () => {
    it('refuses a pending action without an entry', () => {
      for (const action of ['buylimit', 'selllimit', 'buystop', 'sellstop']) {
        expect(problemOf(`EURUSD,${action},vol=1`)).toEqual({
          code: 'ENTRY_REQUIRED',
          param: 'action',
          detail: `${action} is a pending order and needs its entry: add one of entry_price, entry_pips or entry_percent`,
        });
        for (const entry of ['entry_price=1.1', 'entry_pips=10', 'entry_percent=1']) {
          expect(signalOf(`EURUSD,${action},${entry}`).entry).toBeDefined();
        }
      }
    });
  });

  describe('INVALID_PARAMETER', () => {
    it('refuses a repeated name', () => {
      expect(problemOf('EURUSD,buy,sl_pips=20,SL_PIPS=2')).toEqual({
        code: 'INVALID_PARAMETER',
        param: 'sl_pips',
        detail: 'sl_pips is given more than once (names are case-insensitive); give it once',
      });
      expect(codesOf('EURUSD,buy,comment=a,comment=b')).toEqual([['INVALID_PARAMETER', 'comment']]);
      expect(codesOf('EURUSD,buy,exop,exop')).toEqual([['INVALID_PARAMETER', 'exop']]);
      expect(codesOf('EURUSD,buy,vol=1,vol=1')).toEqual([['INVALID_VOLUME', 'vol']]);
    });

    it('refuses two variants of the same thing', () => {
      expect(problemOf('EURUSD,buy,sl_pips=20,sl_price=1.05')).toEqual({
        code: 'INVALID_PARAMETER',
        param: 'sl_price',
        detail: 'sl_price and sl_pips both give the stop loss; give only one of sl_pips, sl_price, sl_percent',
      });
      expect(codesOf('EURUSD,buylimit,entry_pips=5,entry_price=1.05')).toEqual([['INVALID_PARAMETER', 'entry_price']]);
      expect(codesOf('EURUSD,buy,tp_pips=20,tp_percent=1')).toEqual([['INVALID_PARAMETER', 'tp_percent']]);
      expect(problemOf('EURUSD,buy,tp_pips=20,tp1=10')).toMatchObject({
        param: 'tp1',
        detail: expect.stringMatching(/tp1 and tp_pips are two ways of giving take profits/),
      });
      expect(codesOf('EURUSD,buy,tp2=20,tp1=10,tp_price=1.2')).toEqual([['INVALID_PARAMETER', 'tp_price']]);
      expect(problemOf('EURUSD,buy,exop,exent')).toMatchObject({
        code: 'INVALID_PARAMETER',
        param: 'exent',
        detail: expect.stringMatching(/exclude each other/),
      });
      expect(problemOf('EURUSD,closeall,pct=50,pct_lots=1')).toMatchObject({
        code: 'INVALID_PARAMETER',
        param: 'pct_lots',
      });
    });

    it('refuses entry_* on anything but a pending action', () => {
      for (const action of ['buy', 'sell', 'closebuy', 'closeall', 'closelongbuy', 'cancellong']) {
        expect(problemOf(`EURUSD,${action},entry_price=1.1`)).toMatchObject({
          code: 'INVALID_PARAMETER',
          param: 'entry_price',
          detail: expect.stringMatching(/entry_price only applies to pending orders/),
        });
      }
    });

    it('refuses pct and pct_lots on anything but closebuy, closesell and closeall', () => {
      for (const action of ['buy', 'closelongsell', 'cancelshort']) {
        expect(codesOf(`EURUSD,${action},pct=50`)).toEqual([['INVALID_PARAMETER', 'pct']]);
        expect(codesOf(`EURUSD,${action},pct_lots=1`)).toEqual([['INVALID_PARAMETER', 'pct_lots']]);
      }
      expect(codesOf('EURUSD,buylimit,entry_pips=5,pct=50')).toEqual([['INVALID_PARAMETER', 'pct']]);
    });

    it('refuses position parameters on close and cancel actions', () => {
      const opening = [
        'vol=1',
        'vol_pctbal=1',
        'sl_pips=10',
        'tp_pips=10',
        'tp1=10',
        'pct1=50',
        'trail_distance=5',
        'trail_trigger=1',
        'be_trigger=5',
        'be_offset=1',
        'exop',
        'exent',
      ];
      for (const action of ['closebuy', 'closesell', 'closeall', 'cancellong', 'cancelshort']) {
        for (const parameter of opening) {
          const problem = problemOf(`EURUSD,${action},${parameter}`);
          expect(problem.code).toBe('INVALID_PARAMETER');
          expect(problem.detail).toMatch(new RegExp(`^${parameter.split('=')[0]} does not apply to ${action}`));
        }
      }
      expect(codesOf('{"symbol":"EURUSD","action":"closeall","volume":1,"sl":2,"tp":3}', 'json')).toEqual([
        ['INVALID_PARAMETER', 'volume'],
        ['INVALID_PARAMETER', 'sl'],
        ['INVALID_PARAMETER', 'tp'],
      ]);
    });

    it('lets the position targets take the opening parameters (flat too, so one template serves all three), but not exop, exent, entry or pct', () => {
      for (const action of ['positionlong', 'positionshort', 'positionflat']) {
        expect(signalOf(`EURUSD,${action},vol_pctbal_loss=1,sl_pips=20,tp_pips=40,comment=x`)).toEqual({
          symbol: 'EURUSD',
          action,
          comment: 'x',
          volume: { type: 'pctbal_loss', value: 1 },
          sl: { type: 'pips', value: 20 },
          tp: [{ type: 'pips', value: 40, pct: 100 }],
        });
        for (const parameter of ['exop', 'exent']) {
          expect(problemOf(`EURUSD,${action},${parameter}`).detail).toBe(
            `${parameter} does not apply to ${action}: a position target already closes what is on the other side`,
          );
        }
        expect(codesOf(`EURUSD,${action},entry_pips=5`)).toEqual([['INVALID_PARAMETER', 'entry_pips']]);
        expect(codesOf(`EURUSD,${action},pct=50`)).toEqual([['INVALID_PARAMETER', 'pct']]);
      }
      // A stop percent is below 100 where the price would fall by it: under a long, not a short.
      expect(codesOf('EURUSD,positionlong,sl_percent=100')).toEqual([['INVALID_PARAMETER', 'sl_percent']]);
      expect(signalOf('EURUSD,positionshort,sl_percent=100')).toMatchObject({ sl: { type: 'percent', value: 100 } });
    });

    it('lets the close-then-open actions take the opening parameters', () => {
      for (const action of ['closelongbuy', 'closelongsell', 'closeshortbuy', 'closeshortsell']) {
        expect(
          signalOf(`EURUSD,${action},vol=1,sl_pips=10,tp1=10,tp2=20,trail_distance=5,be_trigger=5,exent,comment=x`),
        ).toMatchObject({ action });
      }
    });

    it('lets pending actions take the position parameters', () => {
      expect(
        signalOf('EURUSD,selllimit,entry_pips=10,vol=1,sl_pips=10,tp_pips=20,trail_distance=5,be_trigger=5').entry,
      ).toStrictEqual({
        type: 'pips',
        value: 10,
      });
    });

    it('takes a comment on every action', () => {
      expect(signalOf('EURUSD,cancellong,comment=grid').comment).toBe('grid');
      expect(signalOf('EURUSD,closebuy,comment=grid').comment).toBe('grid');
    });

    it('refuses non-positive distances, prices and percents', () => {
      for (const parameter of [
        'sl_pips',
        'sl_price',
        'sl_percent',
        'tp_pips',
        'tp_price',
        'tp_percent',
        'tp1',
        'tp1_price',
      ]) {
        for (const value of ['0', '-5']) {
          const problem = problemOf(`EURUSD,buy,${parameter}=${value}`);
          expect(problem).toMatchObject({ code: 'INVALID_PARAMETER', param: parameter });
          expect(problem.detail).toMatch(new RegExp(`^${parameter} must be greater than 0 \\(.*\\), got ${value}$`));
        }
      }
      for (const parameter of ['entry_pips', 'entry_price', 'entry_percent']) {
        expect(codesOf(`EURUSD,buystop,${parameter}=0`)).toEqual([['INVALID_PARAMETER', parameter]]);
      }
      expect(problemOf('{"symbol":"EURUSD","action":"buy","sl":-1,"slType":"price"}', 'json').detail).toBe(
        'sl (in price) must be greater than 0 (a price), got -1',
      );
    });

    it('refuses percent stops, targets and entries that would reach a price of zero', () => {
      expect(problemOf('EURUSD,buy,sl_percent=100').detail).toMatch(/sl_percent must be below 100 for buy/);
      expect(signalOf('EURUSD,buy,sl_percent=99.9').sl).toStrictEqual({ type: 'percent', value: 99.9 });
      expect(problemOf('EURUSD,sell,tp_percent=100').detail).toMatch(/tp_percent must be below 100 for sell/);
      expect(problemOf('EURUSD,closelongsell,tp1_percent=150').code).toBe('INVALID_PARAMETER');
      expect(signalOf('BTCUSD,buy,tp_percent=150').tp).toStrictEqual([{ type: 'percent', value: 150, pct: 100 }]);
      expect(problemOf('EURUSD,buylimit,entry_percent=100').detail).toMatch(
        /entry_percent must be below 100 for buylimit/,
      );
      expect(problemOf('EURUSD,sellstop,entry_percent=120').code).toBe('INVALID_PARAMETER');
      expect(signalOf('EURUSD,buystop,entry_percent=120').entry).toStrictEqual({ type: 'percent', value: 120 });
    });

    it('limits sl_percent below 100 only on the buy side, where the stop lies below the entry', () => {
      for (const action of ['buy', 'buylimit', 'buystop', 'closelongbuy', 'closeshortbuy']) {
        const entry = action.startsWith('buy') && action !== 'buy' ? 'entry_pips=10,' : '';
        expect(problemOf(`EURUSD,${action},${entry}sl_percent=100`)).toEqual({
          code: 'INVALID_PARAMETER',
          param: 'sl_percent',
          detail: `sl_percent must be below 100 for ${action} (a stop 100% below the entry is at a price of zero or less), got 100`,
        });
      }
      for (const action of ['sell', 'selllimit', 'sellstop', 'closelongsell', 'closeshortsell']) {
        const entry = action.startsWith('sell') && action !== 'sell' ? 'entry_pips=10,' : '';
        expect(signalOf(`EURUSD,${action},${entry}sl_percent=150`).sl).toStrictEqual({ type: 'percent', value: 150 });
      }
      expect(signalOf('{"symbol":"EURUSD","action":"sell","sl":100,"slType":"percent"}', 'json').sl).toStrictEqual({
        type: 'percent',
        value: 100,
      });
    });

    it('refuses trail_* without trail_distance, and trail values out of range', () => {
      expect(problemOf('EURUSD,buy,trail_trigger=10')).toEqual({
        code: 'INVALID_PARAMETER',
        param: 'trail_trigger',
        detail:
          'trail_trigger needs trail_distance (how many pips the stop trails behind the price); add trail_distance or remove trail_trigger',
      });
      expect(codesOf('EURUSD,buy,trail_step=1,trail_trigger=10')).toEqual([
        ['INVALID_PARAMETER', 'trail_step'],
        ['INVALID_PARAMETER', 'trail_trigger'],
      ]);
      expect(codesOf('EURUSD,buy,trail_distance=0')).toEqual([['INVALID_PARAMETER', 'trail_distance']]);
      expect(codesOf('EURUSD,buy,trail_distance=5,trail_trigger=-1,trail_step=-1')).toEqual([
        ['INVALID_PARAMETER', 'trail_trigger'],
        ['INVALID_PARAMETER', 'trail_step'],
      ]);
      expect(signalOf('EURUSD,buy,trail_distance=5,trail_trigger=0,trail_step=0').trail).toStrictEqual({
        trigger: 0,
        distance: 5,
        step: 0,
      });
    });

    it('refuses be_offset without be_trigger, and breakeven values out of range', () => {
      expect(problemOf('EURUSD,buy,be_offset=2')).toMatchObject({
        code: 'INVALID_PARAMETER',
        param: 'be_offset',
        detail: expect.stringMatching(/^be_offset needs be_trigger/),
      });
      expect(codesOf('EURUSD,buy,be_trigger=-1')).toEqual([['INVALID_PARAMETER', 'be_trigger']]);
      expect(codesOf('EURUSD,buy,be_trigger=10,be_offset=-1')).toEqual([['INVALID_PARAMETER', 'be_offset']]);
      expect(problemOf('EURUSD,buy,be_trigger=10,be_offset=10').detail).toMatch(
        /be_offset \(10\) must be below be_trigger \(10\)/,
      );
      expect(signalOf('EURUSD,buy,be_trigger=0').breakeven).toStrictEqual({ trigger: 0, offset: 0 });
      // An offset of 0 is the default, so it is allowed whatever the trigger.
      expect(signalOf('EURUSD,buy,be_trigger=0,be_offset=0').breakeven).toStrictEqual({ trigger: 0, offset: 0 });
      expect(signalOf('EURUSD,buy,be_trigger=10,be_offset=9.5').breakeven).toStrictEqual({ trigger: 10, offset: 9.5 });
    });

    it('refuses close amounts out of range', () => {
      for (const value of ['0', '-10', '100.01']) {
        expect(codesOf(`EURUSD,closebuy,pct=${value}`)).toEqual([['INVALID_PARAMETER', 'pct']]);
      }
      expect(signalOf('EURUSD,closebuy,pct=100').close).toStrictEqual({ pct: 100 });
      expect(signalOf('EURUSD,closebuy,pct=12.5').close).toStrictEqual({ pct: 12.5 });
      expect(codesOf('EURUSD,closebuy,pct_lots=0')).toEqual([['INVALID_PARAMETER', 'pct_lots']]);
    });
  });

  describe('the symbol', () => {
    it('is trimmed and upper-cased, and may carry broker suffixes and separators', () => {
      const symbols: [string, string][] = [
        ['eurusd', 'EURUSD'],
        ['EURUSD.m', 'EURUSD.M'],
        ['GER40.cash', 'GER40.CASH'],
        ['BTC/USD', 'BTC/USD'],
        ['US30#', 'US30#'],
        ['#AAPL', '#AAPL'],
        ['EURUSD-ECN', 'EURUSD-ECN'],
        ['EURUSD_i', 'EURUSD_I'],
        ['S&P500', 'S&P500'],
        ['nasdaq:aapl', 'NASDAQ:AAPL'],
        ['^DJI', '^DJI'],
        ['XAUUSD+', 'XAUUSD+'],
        ['X'.repeat(SYMBOL_MAX_LENGTH), 'X'.repeat(SYMBOL_MAX_LENGTH)],
      ];
      for (const [written, symbol] of symbols) expect(signalOf(`  ${written}  ,buy`).symbol).toBe(symbol);
    });

    it('refuses spaces, control characters, other letters, no letter or digit, and overlong symbols', () => {
      for (const symbol of [
        'EUR USD',
        'EUR\u0000USD',
        'EUR\tUSD',
        'ÉURUSD',
        'EUR=USD',
        '...',
        'X'.repeat(SYMBOL_MAX_LENGTH + 1),
      ]) {
        expect(problemOf(`{"symbol":${JSON.stringify(symbol)},"action":"buy"}`, 'json')).toMatchObject({
          code: 'INVALID_PARAMETER',
          param: 'symbol',
        });
      }
      expect(problemOf('EUR USD,buy').detail).toBe(
        "symbol 'EUR USD' may only hold letters A-Z, digits and . _ - / # + ! $ @ & ^ : (like EURUSD, GER40.cash or BTC/USD)",
      );
    });
  });

  describe('the comment', () => {
    it('keeps its case and inner spaces, trimmed', () => {
      expect(signalOf('EURUSD,buy,comment=  Grid Bot #2 ').comment).toBe('Grid Bot #2');
      expect(signalOf('{"symbol":"EURUSD","action":"buy","comment":" Ünïcode ✓ "}', 'json').comment).toBe('Ünïcode ✓');
    });

    it('refuses line breaks, control characters and overlong comments', () => {
      for (const comment of ['a\nb', 'a\u0007b', 'a\u2028b', 'x'.repeat(COMMENT_MAX_CHARACTERS + 1), '   ']) {
        expect(
          problemOf(`{"symbol":"EURUSD","action":"buy","comment":${JSON.stringify(comment)}}`, 'json'),
        ).toMatchObject({
          code: 'INVALID_PARAMETER',
          param: 'comment',
        });
      }
      expect(signalOf(`EURUSD,buy,comment=${'é'.repeat(COMMENT_MAX_CHARACTERS)}`).comment).toHaveLength(
        COMMENT_MAX_CHARACTERS,
      );
    });
  });

  describe('reporting', () => {
    it('reports every problem, in body order, each naming its parameter', () => {
      expect(codesOf('EURUSD,closebuy,sl_pips=10,pct=0,foo=1,vol=1,comment=')).toEqual([
        ['INVALID_PARAMETER', 'sl_pips'],
        ['INVALID_PARAMETER', 'pct'],
        ['UNKNOWN_PARAMETER', 'foo'],
        ['INVALID_PARAMETER', 'vol'],
        ['INVALID_PARAMETER', 'comment'],
      ]);
    });

    it('puts problems with the symbol and action first in text, where they are first', () => {
      expect(codesOf('EUR USD,nope,vol=0,sl_pips=x')).toEqual([
        ['INVALID_PARAMETER', 'symbol'],
        ['UNKNOWN_ACTION', 'action'],
        ['INVALID_VOLUME', 'vol'],
        ['INVALID_PARAMETER', 'sl_pips'],
      ]);
    });

    it('gives each parameter at most one problem, the first in body order', () => {
      expect(problemsOf('EURUSD,buy,vol=1,vol=2,vol=3')).toEqual([
        {
          code: 'INVALID_VOLUME',
          param: 'vol',
          detail: 'vol is given more than once (names are case-insensitive); give it once',
        },
      ]);
      expect(problemsOf('EURUSD,buy,vol_dollar=0')).toEqual([
        { code: 'INVALID_VOLUME', param: 'vol_dollar', detail: 'vol_dollar must be greater than 0, got 0' },
      ]);
      expect(problemsOf('EURUSD,buy,vol_pctbal_loss=200')).toEqual([
        {
          code: 'INVALID_VOLUME',
          param: 'vol_pctbal_loss',
          detail: 'vol_pctbal_loss risks 200% of the balance on one trade; give at most 100',
        },
      ]);
      expect(codesOf('EURUSD,buy,foo,bar=1,foo')).toEqual([
        ['UNKNOWN_PARAMETER', 'foo'],
        ['UNKNOWN_PARAMETER', 'bar'],
      ]);
    });

    it('gives every problem a detail that names the parameter', () => {
      for (const problem of problemsOf('EURUSD,buy,vol=0,sl_pips=x,tp3=1,pct9=5,be_offset=1,trail_step=1,exop=1')) {
        expect(problem.param).toBeDefined();
        expect(problem.detail).toContain(problem.param!);
      }
    });
  });
});
