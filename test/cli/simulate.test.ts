import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

// The built CLI (`npm run build`); the run refuses to start on a build older than src/ (test/support/fresh-build.ts).
const CLI = path.resolve('dist/cli/main.js');
const FIXTURES = 'test/fixtures/engine';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout's JSON lines, parsed. */
  lines: Record<string, unknown>[];
}

/** Runs `signalgate simulate …` as a real process. */
function simulate(args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'simulate', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const lines = stdout
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      resolve({ code, stdout, stderr, lines });
    });
  });
}

const fixture = (name: string) => path.join(FIXTURES, name);

const tempDirs: string[] = [];
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

function tempFile(name: string, content: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-simulate-'));
  tempDirs.push(dir);
  const file = path.join(dir, name);
  writeFileSync(file, content);
  return file;
}

describe('signalgate simulate', () => {
  it('replays ticks and signals in time order and prints the events, then the summary', async () => {
    const run = await simulate(['--ticks', fixture('ticks.csv'), '--signals', fixture('signals.csv')]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.lines).toEqual([
      // a signal comes before a tick of the same time, so at 09:00 there is no price yet
      {
        type: 'rejected',
        time: '2024-03-01T09:00:00.000Z',
        signal: 'EURUSD,buy,vol=0.1',
        reason: 'there is no price for EURUSD yet',
      },
      // buy at ask 1.10020; SL 20 pips, TP 40 pips
      {
        type: 'opened',
        time: '2024-03-01T09:00:30.000Z',
        position: 1,
        symbol: 'EURUSD',
        side: 'buy',
        volume: 0.1,
        price: 1.1002,
        sl: 1.0982,
        tp: 1.1042,
        comment: 'trend',
      },
      // the parser's problem detail is the reason, and the run goes on
      {
        type: 'rejected',
        time: '2024-03-01T09:00:30.000Z',
        signal: 'EURUSD,buy,vol=0.1,sl_pip=20',
        reason: expect.stringContaining("'sl_pip'"),
      },
      // 1% of 10000 = 100 USD at risk; 30 pips on USDJPY = 30000 JPY per lot / mid 150.01 = 199.99 USD → 0.5 lots
      {
        type: 'opened',
        time: '2024-03-01T09:00:30.000Z',
        position: 2,
        symbol: 'USDJPY',
        side: 'sell',
        volume: 0.5,
        price: 150,
        sl: 150.3,
        tp: 149.7,
        comment: null,
      },
      // ask 1.10020 − 20 pips
      {
        type: 'order_placed',
        time: '2024-03-01T09:01:00.000Z',
        order: 3,
        symbol: 'EURUSD',
        side: 'buy',
        kind: 'limit',
        volume: 0.2,
        price: 1.0982,
        comment: null,
      },
      // 0.1 × 0.0040 × 100000 = 40.00
      {
        type: 'closed',
        time: '2024-03-01T09:02:00.000Z',
        position: 1,
        volume: 0.1,
        price: 1.1042,
        profit: 40,
        reason: 'tp',
      },
      // the Unix-ms tick at 09:03: ask 149.70 touches the TP; 0.5 × 0.30 × 100000 = 15000 JPY / mid 149.69 = 100.21 USD
      {
        type: 'closed',
        time: '2024-03-01T09:03:00.000Z',
        position: 2,
        volume: 0.5,
        price: 149.7,
        profit: 100.21,
        reason: 'tp',
      },
      { type: 'order_filled', time: '2024-03-01T09:04:00.000Z', order: 3, position: 4, price: 1.0982 },
      {
        type: 'opened',
        time: '2024-03-01T09:04:00.000Z',
        position: 4,
        symbol: 'EURUSD',
        side: 'buy',
        volume: 0.2,
        price: 1.0982,
        sl: 1.0962,
        tp: null,
        comment: null,
      },
      // balance 10000 + 40 + 100.21; equity adds 0.2 × (1.09800 − 1.09820) × 100000 = −4.00
      {
        type: 'summary',
        time: '2024-03-01T09:04:00.000Z',
        balance: 10_140.21,
        equity: 10_136.21,
        currency: 'USD',
        positions: [
          { position: 4, symbol: 'EURUSD', side: 'buy', volume: 0.2, price: 1.0982, sl: 1.0962, comment: null },
        ],
        orders: [],
      },
    ]);
  });

  it('applies the instruments file: symbol mapping and overrides', async () => {
    const run = await simulate([
      '--ticks',
      fixture('mapped-ticks.csv'),
      '--signals',
      fixture('mapped-signals.csv'),
      '--instruments',
      fixture('instruments.json'),
    ]);
    expect(run.code).toBe(0);
    expect(run.lines.map((l) => [l.type, l.symbol ?? l.position, l.profit])).toEqual([
      ['opened', 'EURUSD.m', undefined],
      ['opened', 'XAUUSD.pro', undefined],
      // contract size overridden to 10: (2010.00 − 2000.50) × 1 × 10 = 95.00
      ['closed', 2, 95],
      // (1.09800 − 1.10020) × 1 × 100000 = −220.00
      ['closed', 1, -220],
      ['summary', undefined, undefined],
    ]);
    expect(run.lines.at(-1)).toMatchObject({ balance: 9875, equity: 9875 });
  });

  it('runs an account in another currency from a starting balance', async () => {
    const ticks = tempFile('ticks.csv', '1000,EURUSD,1.25000,1.25000\n3000,EURUSD,1.26250,1.26250\n');
    const signals = tempFile('signals.csv', '2000,EURUSD,buy,vol=1\n');
    const run = await simulate(['--ticks', ticks, '--signals', signals, '--balance', '5000', '--currency', 'eur']);
    expect(run.code).toBe(0);
    // 1 lot: 0.0125 × 100000 = 1250 USD / 1.2625 = 990.10 EUR floating
    expect(run.lines.at(-1)).toMatchObject({
      type: 'summary',
      time: '1970-01-01T00:00:03.000Z',
      balance: 5000,
      equity: 5990.1,
      currency: 'EUR',
    });
  });

  it('uses --default-volume for a signal without volume', async () => {
    const ticks = tempFile('ticks.csv', '1000,EURUSD,1.1,1.1002\n');
    const signals = tempFile('signals.csv', '2000,EURUSD,sell\n');
    const run = await simulate(['--ticks', ticks, '--signals', signals, '--default-volume', '0.3']);
    expect(run.lines[0]).toMatchObject({ type: 'opened', volume: 0.3 });
  });

  it('takes profit only at levels whose share floors to at least the minimum lot, passing no share on', async () => {
    const ticks = tempFile(
      'ticks.csv',
      '1000,EURUSD,1.1000,1.1002\n2000,EURUSD,1.1020,1.1022\n3000,EURUSD,1.1040,1.1042\n4000,EURUSD,1.1060,1.1062\n',
    );
    const signals = tempFile(
      'signals.csv',
      '1500,EURUSD,buy,vol=0.05,tp1_pips=10,pct1=10,tp2_pips=30,pct2=10,tp3_pips=50,pct3=30\n',
    );
    const run = await simulate(['--ticks', ticks, '--signals', signals]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    // Levels 1 and 2 (10 % of 0.05 = 0.005 lots each) floor to nothing and close nothing, and
    // their shares are not carried over; level 3 (30 % = 0.015) floors to 0.01:
    // 0.01 × (1.10600 − 1.10020) × 100000 = 5.80. The shares sum to 50 %, so 0.04 stays open.
    expect(run.lines.map((l) => l.type)).toEqual(['opened', 'partial_close', 'summary']);
    expect(run.lines[1]).toEqual({
      type: 'partial_close',
      time: '1970-01-01T00:00:04.000Z',
      position: 1,
      volume: 0.01,
      price: 1.106,
      profit: 5.8,
    });
    expect(run.lines[2]).toMatchObject({ balance: 10_005.8, positions: [{ position: 1, volume: 0.04 }] });
  });

  it('rejects a signals line with an empty signal as one that does not parse, and goes on', async () => {
    const ticks = tempFile('ticks.csv', '1000,EURUSD,1.1000,1.1002\n');
    const signals = tempFile('signals.csv', '2000,\n3000,   \n4000,EURUSD,buy,vol=0.1\n');
    const run = await simulate(['--ticks', ticks, '--signals', signals]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const empty = {
      type: 'rejected',
      signal: '',
      reason: 'the body is empty; send one signal line like EURUSD,buy,vol=0.1,sl_pips=20',
    };
    expect(run.lines.slice(0, 3)).toEqual([
      { ...empty, time: '1970-01-01T00:00:02.000Z' },
      { ...empty, time: '1970-01-01T00:00:03.000Z' },
      expect.objectContaining({ type: 'opened', time: '1970-01-01T00:00:04.000Z', volume: 0.1 }),
    ]);
  });

  it('replays the ticks of an empty signals file and prints the summary at the last tick', async () => {
    const ticks = tempFile('ticks.csv', '1000,EURUSD,1.1000,1.1002\n2000,EURUSD,1.1010,1.1012\n');
    for (const content of ['', 'time,signal\n', '# nothing yet\n\n']) {
      const run = await simulate(['--ticks', ticks, '--signals', tempFile('signals.csv', content)]);
      expect(run.stderr, JSON.stringify(content)).toBe('');
      expect(run.code).toBe(0);
      expect(run.lines).toEqual([
        {
          type: 'summary',
          time: '1970-01-01T00:00:02.000Z',
          balance: 10_000,
          equity: 10_000,
          currency: 'USD',
          positions: [],
          orders: [],
        },
      ]);
    }
  });

  it('upper-cases tick symbols as the signal language does signal symbols', async () => {
    const ticks = tempFile('ticks.csv', '1000,eurusd,1.1000,1.1002\n2000,EurUsd,1.1040,1.1042\n');
    const signals = tempFile('signals.csv', '1500,EURUSD,buy,vol=0.1\n1500,eurusd,sell,vol=0.1\n');
    const run = await simulate(['--ticks', ticks, '--signals', signals]);
    expect(run.stderr).toBe('');
    expect(run.lines.map((l) => [l.type, l.symbol, l.price])).toEqual([
      ['opened', 'EURUSD', 1.1002],
      ['opened', 'EURUSD', 1.1],
      ['summary', undefined, undefined],
    ]);
    // the mixed-case tick at 2000 priced both: (1.1040 − 1.1002) × 10000 = 38 and (1.1000 − 1.1042) × 10000 = −42
    expect(run.lines.at(-1)).toMatchObject({ time: '1970-01-01T00:00:02.000Z', equity: 9996 });
  });

  describe('bad input exits non-zero, naming the file and line, and prints no events', () => {
    it('a bad ticks line', async () => {
      const run = await simulate(['--ticks', fixture('bad-ticks.csv'), '--signals', fixture('signals.csv')]);
      expect(run.code).not.toBe(0);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(
        `signalgate simulate: ${fixture('bad-ticks.csv')}:3: expected 4 fields (time,symbol,bid,ask), found 3\n`,
      );
    });

    it('a bad signals line', async () => {
      const run = await simulate(['--ticks', fixture('ticks.csv'), '--signals', fixture('bad-signals.csv')]);
      expect(run.code).not.toBe(0);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(`${fixture('bad-signals.csv')}:2: time "31/12/2024" is neither ISO 8601`);
    });

    it('a time in Unix seconds, naming the file and line, instead of replaying in 1970', async () => {
      const ticks = tempFile('ticks.csv', '1709285400000,EURUSD,1.1000,1.1002\n');
      const signals = tempFile('signals.csv', '# exported in seconds\n1709285400,EURUSD,buy\n');
      const run = await simulate(['--ticks', ticks, '--signals', signals]);
      expect(run.code).not.toBe(0);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(
        `signalgate simulate: ${signals}:2: time "1709285400" looks like Unix seconds (read as milliseconds it would be 1970-01-20T18:48:05.400Z); ` +
          'times are Unix milliseconds or ISO 8601: for seconds, write 1709285400000, or a time like 2024-03-01T09:30:00Z\n',
      );
      const secondTicks = tempFile('ticks.csv', '1709285400,EURUSD,1.1000,1.1002\n');
      const refused = await simulate(['--ticks', secondTicks, '--signals', fixture('signals.csv')]);
      expect(refused.stderr).toContain(`${secondTicks}:1: time "1709285400" looks like Unix seconds`);
    });

    it('a ticks file without any tick', async () => {
      for (const content of ['', 'time,symbol,bid,ask\n', '\n# no ticks\n']) {
        const ticks = tempFile('ticks.csv', content);
        const run = await simulate(['--ticks', ticks, '--signals', fixture('signals.csv')]);
        expect(run.code, JSON.stringify(content)).not.toBe(0);
        expect(run.stdout).toBe('');
        expect(run.stderr).toBe(
          `signalgate simulate: ${ticks}: holds no ticks; the replay needs at least one line of time,symbol,bid,ask (like 2024-03-01T09:30:00Z,EURUSD,1.10000,1.10020)\n`,
        );
      }
    });

    it('a header that is not exactly time,symbol,bid,ask or time,signal', async () => {
      for (const header of ['time,symbol,ask,bid', 'time,foo,bar,baz', 'time', 'time,symbol,bid,ask,volume']) {
        const ticks = tempFile('ticks.csv', `${header}\n1000,EURUSD,1.1000,1.1002\n`);
        const run = await simulate(['--ticks', ticks, '--signals', fixture('signals.csv')]);
        expect(run.code, header).not.toBe(0);
        expect(run.stdout).toBe('');
        expect(run.stderr).toBe(
          `signalgate simulate: ${ticks}:1: the header must be exactly time,symbol,bid,ask (in this order), got "${header}"; fix it or remove the line\n`,
        );
      }
      // case and spaces around the columns do not matter
      const ticks = tempFile('ticks.csv', ' Time , SYMBOL,Bid ,ask\n1000,EURUSD,1.1000,1.1002\n');
      const signals = tempFile('signals.csv', 'TIME , Signal\n');
      expect(await simulate(['--ticks', ticks, '--signals', signals])).toMatchObject({ code: 0, stderr: '' });

      const badSignals = tempFile('signals.csv', '# exported\ntime,symbol,action\n1000,EURUSD,buy\n');
      const run = await simulate(['--ticks', ticks, '--signals', badSignals]);
      expect(run.code).not.toBe(0);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(
        `signalgate simulate: ${badSignals}:2: the header must be exactly time,signal (the signal being the rest of the line), got "time,symbol,action"; fix it or remove the line\n`,
      );
    });

    it('a tick price that is not a plain decimal', async () => {
      for (const [bid, ask] of [
        ['1e0', '1.0002'],
        ['1.', '1.0002'],
        ['1.0000', '1.0002e0'],
        ['0x1', '2'],
      ] as const) {
        const ticks = tempFile('ticks.csv', `1000,EURUSD,1.1000,1.1002\n2000,EURUSD,${bid},${ask}\n`);
        const run = await simulate(['--ticks', ticks, '--signals', fixture('signals.csv')]);
        expect(run.code, `${bid},${ask}`).not.toBe(0);
        expect(run.stdout).toBe('');
        const [side, text] = bid.startsWith('1.0000') ? ['ask', ask] : ['bid', bid];
        expect(run.stderr).toBe(
          `signalgate simulate: ${ticks}:2: ${side} "${text}" is not a plain decimal number (digits with an optional fraction, like 1.10020; no exponent, no trailing point)\n`,
        );
      }
    });

    it('a bad instruments file', async () => {
      const run = await simulate([
        '--ticks',
        fixture('ticks.csv'),
        '--signals',
        fixture('signals.csv'),
        '--instruments',
        fixture('bad-instruments.json'),
      ]);
      expect(run.code).not.toBe(0);
      expect(run.stderr).toContain(
        `${fixture('bad-instruments.json')}:4: instrument EURUSD: lotStep must be a number above 0`,
      );
    });

    it('a file that does not exist, and a bad option', async () => {
      const missing = await simulate(['--ticks', 'no-such-ticks.csv', '--signals', fixture('signals.csv')]);
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toContain('no-such-ticks.csv: no such file');
      const balance = await simulate([
        '--ticks',
        fixture('ticks.csv'),
        '--signals',
        fixture('signals.csv'),
        '--balance',
        'lots',
      ]);
      expect(balance.code).not.toBe(0);
      expect(balance.stderr).toContain('--balance must be a number above 0');
    });
  });
});
