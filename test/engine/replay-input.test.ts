import { describe, expect, it } from 'vitest';
import { interleave, parseSignalsFile, parseTicksFile, parseTimestamp } from '../../src/engine/index.js';

describe('timestamps', () => {
  it('reads Unix milliseconds', () => {
    expect(parseTimestamp('1709285400000')).toBe(Date.UTC(2024, 2, 1, 9, 30));
    expect(parseTimestamp('0')).toBe(0);
  });

  it('reads ISO 8601, a time without an offset being UTC', () => {
    const nine30 = Date.UTC(2024, 2, 1, 9, 30);
    expect(parseTimestamp('2024-03-01T09:30:00Z')).toBe(nine30);
    expect(parseTimestamp('2024-03-01T09:30:00')).toBe(nine30);
    expect(parseTimestamp('2024-03-01 09:30')).toBe(nine30);
    expect(parseTimestamp('2024-03-01T10:30:00+01:00')).toBe(nine30);
    expect(parseTimestamp('2024-03-01T04:00-0530')).toBe(nine30);
    expect(parseTimestamp('2024-03-01T09:30:00.250Z')).toBe(nine30 + 250);
    expect(parseTimestamp('2024-03-01')).toBe(Date.UTC(2024, 2, 1));
  });

  it('refuses what is neither', () => {
    for (const bad of [
      'yesterday',
      '2024-02-30T00:00Z',
      '2023-02-29',
      '2024-03-01T24:00Z',
      '1.5',
      '-5',
      '03/01/2024',
      '',
    ]) {
      expect(parseTimestamp(bad), bad).toBeNull();
    }
    expect(parseTimestamp('2024-02-29')).toBe(Date.UTC(2024, 1, 29));
  });
});

describe('the ticks file', () => {
  it('reads time,symbol,bid,ask with an optional header, skipping blank and # lines', () => {
    const text =
      'time,symbol,bid,ask\r\n\r\n# warm-up\r\n2024-03-01T09:30:00Z, EURUSD ,1.10000,1.10020\r\n1709285401000,USDJPY,150.00,150.02\r\n';
    expect(parseTicksFile(text)).toEqual({
      ok: true,
      records: [
        { time: Date.UTC(2024, 2, 1, 9, 30), symbol: 'EURUSD', bid: 1.1, ask: 1.1002, line: 4 },
        { time: Date.UTC(2024, 2, 1, 9, 30, 1), symbol: 'USDJPY', bid: 150, ask: 150.02, line: 5 },
      ],
    });
    expect(parseTicksFile('1,EURUSD,1.1,1.1002\n')).toMatchObject({ ok: true, records: [{ line: 1 }] });
  });

  it('refuses a time of 9 to 11 digits as Unix seconds, keeping shorter and longer numbers as milliseconds', () => {
    for (const time of ['99999999', '100000000000', '1709285400000']) {
      expect(parseTicksFile(`${time},EURUSD,1.1,1.1002\n`)).toMatchObject({
        ok: true,
        records: [{ time: Number(time) }],
      });
    }
    for (const time of ['100000000', '1709285400', '99999999999', '0001709285400']) {
      expect(parseTicksFile(`${time},EURUSD,1.1,1.1002\n`)).toMatchObject({
        ok: false,
        line: 1,
        message: expect.stringContaining(`time "${time}" looks like Unix seconds`),
      });
      expect(parseSignalsFile(`${time},EURUSD,buy\n`)).toMatchObject({
        ok: false,
        line: 1,
        message: expect.stringContaining('looks like Unix seconds'),
      });
    }
  });

  it('names the line of the first bad record', () => {
    expect(parseTicksFile('time,symbol,bid,ask\n1,EURUSD,1.1,1.1002\n2,EURUSD,1.1\n')).toEqual({
      ok: false,
      line: 3,
      message: 'expected 4 fields (time,symbol,bid,ask), found 3',
    });
    expect(parseTicksFile('1,EURUSD,abc,1.1\n')).toEqual({
      ok: false,
      line: 1,
      message:
        'bid "abc" is not a plain decimal number (digits with an optional fraction, like 1.10020; no exponent, no trailing point)',
    });
    expect(parseTicksFile('1,EURUSD,0,1.1\n')).toEqual({
      ok: false,
      line: 1,
      message: 'bid "0" is not a price above 0',
    });
    expect(parseTicksFile('1,EURUSD,1.1,1.09\n')).toEqual({ ok: false, line: 1, message: 'ask 1.09 is below bid 1.1' });
    expect(parseTicksFile('\n\nnoon,EURUSD,1.1,1.2\n')).toEqual({
      ok: false,
      line: 3,
      message: 'time "noon" is neither ISO 8601 (e.g. 2024-03-01T09:30:00Z) nor Unix milliseconds',
    });
    // a header is only allowed as the first line
    expect(parseTicksFile('1,EURUSD,1.1,1.2\ntime,symbol,bid,ask\n')).toMatchObject({ ok: false, line: 2 });
  });

  it('takes a header only when it names exactly time,symbol,bid,ask, in any case', () => {
    expect(parseTicksFile('# feed\n TIME , Symbol,BID,ask \n1,EURUSD,1.1,1.2\n')).toMatchObject({
      ok: true,
      records: [{ line: 3 }],
    });
    for (const header of ['time,symbol,ask,bid', 'time,foo,bar,baz', 'time', 'time,symbol,bid,ask,']) {
      expect(parseTicksFile(`\n${header}\n1,EURUSD,1.1,1.2\n`), header).toEqual({
        ok: false,
        line: 2,
        message: `the header must be exactly time,symbol,bid,ask (in this order), got "${header}"; fix it or remove the line`,
      });
    }
  });

  it('refuses a file without any tick, naming no line', () => {
    for (const text of ['', '\n\n', 'time,symbol,bid,ask\n', '# none\n']) {
      expect(parseTicksFile(text), JSON.stringify(text)).toEqual({
        ok: false,
        line: null,
        message:
          'holds no ticks; the replay needs at least one line of time,symbol,bid,ask (like 2024-03-01T09:30:00Z,EURUSD,1.10000,1.10020)',
      });
    }
  });

  it('reads prices as plain decimals, as the signal language does', () => {
    expect(parseTicksFile('1,EURUSD,+.5,1.25\n')).toMatchObject({ ok: true, records: [{ bid: 0.5, ask: 1.25 }] });
    for (const price of ['1e0', '1.', '1.1E-1', '0x1', 'Infinity', '-1.1']) {
      const outcome = parseTicksFile(`1,EURUSD,${price},2\n`);
      expect(outcome, price).toMatchObject({ ok: false, line: 1 });
    }
    expect(parseTicksFile('1,EURUSD,1.,2\n')).toMatchObject({
      message: expect.stringContaining('bid "1." is not a plain decimal number'),
    });
  });

  it('upper-cases the symbol and holds it to the signal language rules', () => {
    expect(parseTicksFile('1,eurusd.m,1.1,1.2\n')).toMatchObject({ ok: true, records: [{ symbol: 'EURUSD.M' }] });
    expect(parseTicksFile('1,EUR USD,1.1,1.2\n')).toMatchObject({
      ok: false,
      line: 1,
      message: expect.stringContaining("symbol 'EUR USD' may only hold letters A-Z"),
    });
  });
});

describe('the signals file', () => {
  it('takes the rest of the line after the first comma as the signal', () => {
    expect(parseSignalsFile('time,signal\n5,EURUSD,buy,comment="a, b"\n')).toEqual({
      ok: true,
      records: [{ time: 5, text: 'EURUSD,buy,comment="a, b"', line: 2 }],
    });
  });

  it('names the line of a bad record', () => {
    expect(parseSignalsFile('5,EURUSD,buy\n6\n')).toEqual({ ok: false, line: 2, message: 'expected time,<signal>' });
  });

  it('keeps an empty signal, for the language to reject', () => {
    expect(parseSignalsFile('5,\n6,   \n')).toEqual({
      ok: true,
      records: [
        { time: 5, text: '', line: 1 },
        { time: 6, text: '', line: 2 },
      ],
    });
  });

  it('takes a header only when it names exactly time,signal, and may hold no signal at all', () => {
    expect(parseSignalsFile('Time , SIGNAL\n')).toEqual({ ok: true, records: [] });
    expect(parseSignalsFile('')).toEqual({ ok: true, records: [] });
    expect(parseSignalsFile('time,symbol,action\n5,EURUSD,buy\n')).toEqual({
      ok: false,
      line: 1,
      message:
        'the header must be exactly time,signal (the signal being the rest of the line), got "time,symbol,action"; fix it or remove the line',
    });
  });
});

describe('interleaving', () => {
  it('orders by time, signals before ticks of the same time, each file order kept', () => {
    const tick = (time: number, line: number) => ({ time, symbol: 'EURUSD', bid: 1, ask: 1, line });
    const steps = interleave(
      [tick(2, 1), tick(1, 2), tick(2, 3)],
      [
        { time: 2, text: 'a', line: 1 },
        { time: 0, text: 'b', line: 2 },
        { time: 2, text: 'c', line: 3 },
      ],
    );
    expect(steps.map((s) => `${s.kind}${s.line}@${s.time}`)).toEqual([
      'signal2@0',
      'tick2@1',
      'signal1@2',
      'signal3@2',
      'tick1@2',
      'tick3@2',
    ]);
  });
});
