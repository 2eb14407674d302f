import { describe, expect, it } from 'vitest';
import { formatDecimal } from '../../src/language/decimal-number.js';
import { renderSignalText } from '../../src/language/index.js';
import { signalOf } from './outcome.js';

describe('renderSignalText', () => {
  it('writes the canonical text of a market buy with a stop and a target', () => {
    expect(renderSignalText(signalOf('eurusd,BUY,vol=0.10,sl_pips=20,tp_pips=40'))).toBe(
      'EURUSD,buy,vol=0.1,sl_pips=20,tp_pips=40',
    );
  });

  it('writes out every default, so the line says exactly what will be executed', () => {
    expect(renderSignalText(signalOf('EURUSD,buy,tp1=10,tp2=20,tp3=30,trail_distance=5,be_trigger=10'))).toBe(
      'EURUSD,buy,tp1_pips=10,pct1=33,tp2_pips=20,pct2=33,tp3_pips=30,pct3=34,trail_trigger=0,trail_distance=5,trail_step=0,be_trigger=10,be_offset=0',
    );
  });

  it('writes canonical names for aliases and every section in a fixed order', () => {
    expect(renderSignalText(signalOf('xauusd,short,exent,vol_lots=1,comment=Gold'))).toBe(
      'XAUUSD,sell,comment=Gold,vol=1,exent',
    );
    expect(renderSignalText(signalOf('EURUSD,sellstop,entry_percent=1,sl_price=1.2,vol_dollar=50'))).toBe(
      'EURUSD,sellstop,vol_dollar=50,sl_price=1.2,entry_percent=1',
    );
    expect(renderSignalText(signalOf('EURUSD,closelong,pct_lots=0.5,comment=grid'))).toBe(
      'EURUSD,closebuy,comment=grid,pct_lots=0.5',
    );
  });

  it('keeps a single partial target as a numbered level with its share', () => {
    expect(renderSignalText(signalOf('EURUSD,buy,tp1_price=1.2,pct1=50'))).toBe('EURUSD,buy,tp1_price=1.2,pct1=50');
  });

  it('quotes a comment holding a comma or a quote, doubling inner quotes', () => {
    expect(renderSignalText(signalOf('{"symbol":"EURUSD","action":"buy","comment":"say \\"hi\\", go"}', 'json'))).toBe(
      'EURUSD,buy,comment="say ""hi"", go"',
    );
    expect(renderSignalText(signalOf('EURUSD,buy,comment=a=b'))).toBe('EURUSD,buy,comment=a=b');
  });

  it('never writes an exponent', () => {
    expect(renderSignalText(signalOf('{"symbol":"EURUSD","action":"buy","vol":1e-7,"sl_price":1.5e21}', 'json'))).toBe(
      'EURUSD,buy,vol=0.0000001,sl_price=1500000000000000000000',
    );
  });
});

describe('formatDecimal', () => {
  it('writes the shortest digits that read back as the same number, without an exponent', () => {
    const cases: [number, string][] = [
      [0, '0'],
      [-0, '0'],
      [20, '20'],
      [0.1, '0.1'],
      [-1.5, '-1.5'],
      [1e-7, '0.0000001'],
      [1.2345e-7, '0.00000012345'],
      [1e21, '1000000000000000000000'],
      [1.5e21, '1500000000000000000000'],
      [-2.5e-8, '-0.000000025'],
    ];
    for (const [value, text] of cases) expect(formatDecimal(value)).toBe(text);
    for (const value of [5e-324, Number.MAX_VALUE, 0.1 + 0.2, 1 / 3]) expect(Number(formatDecimal(value))).toBe(value);
  });

  it('refuses non-finite numbers', () => {
    expect(() => formatDecimal(Infinity)).toThrow(RangeError);
    expect(() => formatDecimal(NaN)).toThrow(RangeError);
  });
});
