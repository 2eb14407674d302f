import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOG } from '../../src/errors/catalog.js';
import {
  parseSignal,
  type ParseOutcome,
  readTradingViewTemplate,
  renderSignalText,
  type SignalFormat,
} from '../../src/language/index.js';
import { formatDecimal } from '../../src/language/decimal-number.js';
import { renderSignalJson, validSignal } from './valid-signal-arbitrary.js';

const RUNS = { numRuns: 400 };

/** What any body may yield: a signal, or problems with catalog codes the signal language owns. */
function expectWellFormed(outcome: ParseOutcome): void {
  if (outcome.ok) return;
  expect(outcome.problems.length).toBeGreaterThan(0);
  for (const problem of outcome.problems) {
    expect(problem.code === 'PARSE_ERROR' || ERROR_CATALOG[problem.code].status === 422).toBe(true);
    expect(problem.detail).toEqual(expect.any(String));
    expect(problem.detail.length).toBeGreaterThan(0);
  }
  if (outcome.problems.some((problem) => problem.code === 'PARSE_ERROR')) expect(outcome.problems).toHaveLength(1);
  // Each parameter gets at most one problem.
  const params = outcome.problems.flatMap((problem) => (problem.param === undefined ? [] : [problem.param]));
  expect(new Set(params).size).toBe(params.length);
}

/** A plain decimal written out in its simplest form (no sign on zero, no redundant zeros), for comparing values as written. */
function simplestDecimal(text: string): string {
  const [, sign = '', whole = '', fraction = ''] = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(text)!;
  const integer = whole.replace(/^0+/, '') || '0';
  const decimals = fraction.replace(/0+$/, '');
  const magnitude = decimals === '' ? integer : `${integer}.${decimals}`;
  return magnitude === '0' || sign !== '-' ? magnitude : `-${magnitude}`;
}

/** Flips the case of ASCII letters where `flips` says so (cycled). */
function recase(text: string, flips: readonly boolean[]): string {
  let index = 0;
  return text.replace(/[A-Za-z]/g, (letter) => {
    const flip = flips.length > 0 && flips[index++ % flips.length]!;
    if (!flip) return letter;
    return letter === letter.toUpperCase() ? letter.toLowerCase() : letter.toUpperCase();
  });
}

/** Re-cases the symbol, the action and every name of a text body, leaving values alone. */
function recaseTextNames(body: string, flips: readonly boolean[]): string {
  // Quoted values may hold commas; split only outside quotes.
  const tokens = body.match(/(?:[^,"]|"(?:[^"]|"")*")+|(?<=^|,)(?=,|$)/g) ?? [];
  return tokens
    .map((token, index) => {
      if (index < 2) return recase(token, flips);
      const equals = token.indexOf('=');
      return equals < 0 ? recase(token, flips) : recase(token.slice(0, equals), flips) + token.slice(equals);
    })
    .join(',');
}

describe('properties of the signal language', () => {
  it('parses the canonical text of any valid signal back to that signal', () => {
    fc.assert(
      fc.property(validSignal, (signal) => {
        expect(parseSignal(renderSignalText(signal), 'text')).toStrictEqual({ ok: true, signal });
      }),
      RUNS,
    );
  });

  it('parses a JSON rendering of any valid signal, flat or typed, numbers or numeric strings, to that signal', () => {
    fc.assert(
      fc.property(validSignal, fc.boolean(), fc.boolean(), (signal, typed, numbersAsStrings) => {
        expect(parseSignal(renderSignalJson(signal, typed, numbersAsStrings), 'json')).toStrictEqual({
          ok: true,
          signal,
        });
      }),
      RUNS,
    );
  });

  it('makes a position target of any valid opening signal valid as long, short and flat: one TradingView template for all three', () => {
    fc.assert(
      fc.property(
        validSignal.filter(
          (s) => s.action === 'positionlong' || s.action === 'positionshort' || s.action === 'positionflat',
        ),
        (signal) => {
          // The signal's own text with the action replaced by the placeholder the dashboard's message uses.
          const [symbol, , ...rest] = renderSignalText(signal).split(',');
          const template = [symbol, 'position{{strategy.market_position}}', ...rest].join(',');
          const reading = readTradingViewTemplate(template)!;
          expect(reading.renderings.map((r) => r.values['strategy.market_position'])).toEqual([
            'long',
            'short',
            'flat',
          ]);
          for (const rendering of reading.renderings) {
            const parsed = parseSignal(rendering.body, 'text');
            const action = `position${rendering.values['strategy.market_position']}`;
            // A stop percent of 100 or more is a real price above a short, none under a long.
            if (signal.sl?.type === 'percent' && signal.sl.value >= 100 && action === 'positionlong') continue;
            if (signal.tp?.some((l) => l.type === 'percent' && l.value >= 100) && action === 'positionshort') continue;
            expect(parsed).toStrictEqual({ ok: true, signal: { ...signal, action } });
          }
        },
      ),
      RUNS,
    );
  });

  describe('reads a written number at exactly its written value or refuses it', () => {
    const digits = (maxLength: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), maxLength });
    const written = fc
      .tuple(fc.constantFrom('', '-', '+'), digits(25), fc.option(digits(25), { nil: undefined }))
      .filter(
        ([, whole, fraction]) =>
          (whole !== '' && fraction !== '') || (whole === '' && fraction !== undefined && fraction !== ''),
      )
      .map(([sign, whole, fraction]) => `${sign}${whole}${fraction === undefined ? '' : `.${fraction}`}`);

    it('accepting it only when its shortest round-trip digits denote the same value', () => {
      fc.assert(
        fc.property(written, (number) => {
          const outcome = parseSignal(`EURUSD,buy,sl_price=${number}`, 'text');
          const value = Number(number);
          const exact = simplestDecimal(number) === simplestDecimal(formatDecimal(value));
          if (exact && value > 0)
            expect(outcome).toStrictEqual({
              ok: true,
              signal: { symbol: 'EURUSD', action: 'buy', sl: { type: 'price', value } },
            });
          else if (!exact)
            expect(outcome).toMatchObject({
              ok: false,
              problems: [{ param: 'sl_price', detail: expect.stringMatching(/more digits than can be held exactly/) }],
            });
          else expect(outcome.ok).toBe(false);
        }),
        RUNS,
      );
    });

    it('accepting any number of at most 15 significant digits', () => {
      fc.assert(
        fc.property(
          fc.bigInt({ min: 1n, max: 10n ** 15n - 1n }),
          fc.integer({ min: 0, max: 40 }),
          (mantissa, shift) => {
            const whole = mantissa.toString().padStart(shift + 1, '0');
            const number = shift === 0 ? whole : `${whole.slice(0, -shift)}.${whole.slice(-shift)}`;
            expect(parseSignal(`EURUSD,buy,sl_price=${number}`, 'text').ok).toBe(true);
          },
        ),
        RUNS,
      );
    });

    it('the same in text, as a JSON numeric string and as a JSON number literal', () => {
      fc.assert(
        fc.property(written, (number) => {
          const text = parseSignal(`EURUSD,buy,sl_price=${number}`, 'text');
          expect(parseSignal(`{"symbol":"EURUSD","action":"buy","sl_price":"${number}"}`, 'json')).toStrictEqual(text);
          // A JSON literal has no plus sign, leading point or leading zeros.
          const literal = number
            .replace(/^\+/, '')
            .replace(/^(-?)0*(?=\d)/, '$1')
            .replace(/^(-?)\./, '$10.');
          expect(parseSignal(`{"symbol":"EURUSD","action":"buy","sl_price":${literal}}`, 'json')).toStrictEqual(text);
        }),
        RUNS,
      );
    });
  });

  describe('never throws, answers only PARSE_ERROR or 422 codes, and gives each parameter at most one problem', () => {
    const formats = fc.constantFrom<SignalFormat>('text', 'json');

    it('for arbitrary strings', () => {
      fc.assert(
        fc.property(fc.string({ unit: 'binary', maxLength: 300 }), formats, (body, format) => {
          expectWellFormed(parseSignal(body, format));
        }),
        RUNS,
      );
    });

    it('for arbitrary bytes decoded as UTF-8', () => {
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 300 }), formats, (bytes, format) => {
          expectWellFormed(parseSignal(new TextDecoder().decode(bytes), format));
        }),
        RUNS,
      );
    });

    const vocabulary = [
      'EURUSD',
      'eurusd',
      'buy',
      'SELL',
      'closeall',
      'buylimit',
      'cancellong',
      'vol',
      'vol_dollar',
      'vol_pctbal_loss',
      'sl_pips',
      'sl_price',
      'sl_percent',
      'tp_pips',
      'tp1',
      'tp2',
      'tp3_price',
      'tp11',
      'pct1',
      'pct2',
      'pct',
      'pct_lots',
      'entry_pips',
      'entry_percent',
      'trail_trigger',
      'trail_distance',
      'trail_step',
      'be_trigger',
      'be_offset',
      'exop',
      'exent',
      'comment',
      'symbol',
      'action',
      'sl',
      'volume',
      'volumeType',
      'slType',
      'tp',
      'tpType',
      'sl_pip',
      'foo',
      '',
    ];
    const value = fc.oneof(
      fc.constantFrom(
        '0',
        '-1',
        '20',
        '0.5',
        '1e3',
        'abc',
        '',
        '100',
        '150',
        '"a, b"',
        '"',
        '""',
        'lots',
        'dollar',
        'pips',
        'percent',
      ),
      fc.double().map(String),
    );
    const token = fc.oneof(
      fc.constantFrom(...vocabulary),
      fc.tuple(fc.constantFrom(...vocabulary), value).map(([name, v]) => `${name}=${v}`),
    );

    it('for signal-like text lines', () => {
      fc.assert(
        fc.property(fc.array(token, { maxLength: 12 }), (tokens) => {
          expectWellFormed(parseSignal(tokens.join(','), 'text'));
        }),
        RUNS,
      );
    });

    it('for signal-like JSON objects', () => {
      const jsonValue = fc.oneof(value, fc.double(), fc.boolean(), fc.constant(null), fc.jsonValue({ maxDepth: 2 }));
      fc.assert(
        fc.property(fc.array(fc.tuple(fc.constantFrom(...vocabulary), jsonValue), { maxLength: 12 }), (members) => {
          const body = `{${members.map(([key, v]) => `${JSON.stringify(key)}:${JSON.stringify(v) ?? 'null'}`).join(',')}}`;
          expectWellFormed(parseSignal(body, 'json'));
        }),
        RUNS,
      );
    });
  });

  describe('is case-insensitive in names, actions and the symbol', () => {
    const flips = fc.array(fc.boolean(), { minLength: 1, maxLength: 16 });

    it('for valid text signals', () => {
      fc.assert(
        fc.property(validSignal, flips, (signal, flip) => {
          const body = renderSignalText(signal);
          expect(parseSignal(recaseTextNames(body, flip), 'text')).toStrictEqual(parseSignal(body, 'text'));
        }),
        RUNS,
      );
    });

    it('for valid JSON signals (keys, symbol and action)', () => {
      fc.assert(
        fc.property(validSignal, fc.boolean(), flips, (signal, typed, flip) => {
          const body = JSON.parse(renderSignalJson(signal, typed, false)) as Record<string, unknown>;
          const recased = Object.fromEntries(
            Object.entries(body).map(([key, v]) => [
              recase(key, flip),
              key === 'symbol' || key === 'action' ? recase(String(v), flip) : v,
            ]),
          );
          expect(parseSignal(JSON.stringify(recased), 'json')).toStrictEqual(parseSignal(JSON.stringify(body), 'json'));
        }),
        RUNS,
      );
    });

    it('for text lines with problems: the same problems, the same details', () => {
      const vocabulary = [
        'EURUSD',
        'Eur Usd',
        'buy',
        'buyy',
        'closeall',
        'sl_pips',
        'sl_pip',
        'SL',
        'vol',
        'vol_dollar',
        'tp1',
        'tp3',
        'pct2',
        'exop',
        'exent',
        'Foo',
        'pct',
        'entry_price',
      ];
      const line = fc.array(
        fc.oneof(
          fc.constantFrom(...vocabulary),
          fc
            .tuple(fc.constantFrom(...vocabulary), fc.constantFrom('0', '20', 'x', '', '1e3', 'Abc'))
            .map(([n, v]) => `${n}=${v}`),
        ),
        { minLength: 1, maxLength: 10 },
      );
      fc.assert(
        fc.property(line, flips, (tokens, flip) => {
          const body = tokens.join(',');
          expect(parseSignal(recaseTextNames(body, flip), 'text')).toStrictEqual(parseSignal(body, 'text'));
        }),
        RUNS,
      );
    });
  });
});
