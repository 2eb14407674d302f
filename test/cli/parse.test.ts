import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// The built CLI (`npm run build`); the run refuses to start on a build older than src/ (test/support/fresh-build.ts).
const CLI = path.resolve('dist/cli/main.js');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `signalgate parse …` as a real process, feeding `stdin` when given. */
function parse(args: string[], stdin?: string | Buffer): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'parse', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}

const EXAMPLE = {
  symbol: 'EURUSD',
  action: 'buy',
  volume: { type: 'lots', value: 0.1 },
  sl: { type: 'pips', value: 20 },
  tp: [{ type: 'pips', value: 40, pct: 100 }],
};

describe('signalgate parse', () => {
  it('checks a TradingView alert message with placeholders: what each becomes, each message it can turn into, warnings', async () => {
    const run = await parse([
      '{{ticker}},position{{strategy.market_position}},vol_pctbal_loss=1,sl_pips=20,tp_pips=40',
    ]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ symbol: 'BTCUSDT', action: 'positionlong' });
    expect(run.stderr).toContain('{{strategy.market_position}} → long');
    expect(run.stderr).toContain('valid   BTCUSDT,positionflat,vol_pctbal_loss=1,sl_pips=20,tp_pips=40');
    expect(run.stderr).not.toContain('warning');

    const old = await parse(['{{ticker}},{{strategy.order.action}},vol_pctbal_loss=1,sl_pips=20,tp_pips=40']);
    expect(old.code).toBe(0);
    expect(old.stderr).not.toContain('PARSE_ERROR');
    expect(old.stderr).toMatch(
      /warning: \{\{strategy\.order\.action\}\} is buy or sell for every order of a strategy, its exits too/,
    );

    const flat = await parse([
      '--json',
      '{{ticker}},position{{strategy.market_position}},vol={{strategy.market_position_size}}',
    ]);
    expect(flat.code).toBe(1);
    expect(JSON.parse(flat.stdout)).toMatchObject({
      valid: false,
      code: 'INVALID_VOLUME',
      template: { checked: [{ valid: true }, { valid: true }, { valid: false, body: 'BTCUSDT,positionflat,vol=0' }] },
    });
  });

  it('prints the normalized signal of a text argument as JSON and exits 0', async () => {
    const run = await parse(['eurusd,BUY,vol=0.1,sl_pips=20,tp_pips=40']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toStrictEqual(EXAMPLE);
    expect(run.stdout).toContain('\n  "symbol": "EURUSD"');
    expect(run.stderr).toBe('');
  });

  it('says so when the argument is the name of a file rather than a signal', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-parse-'));
    try {
      const file = path.join(dir, 'alert.txt');
      writeFileSync(file, 'EURUSD,buy,vol=0.1\n');
      const run = await parse([file]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        `note: '${file}' is read as the signal itself; to check the signal in that file, run: signalgate parse < ${file}`,
      );
      const fromStdin = await parse([], 'EURUSD,buy,vol=0.1\n');
      expect(fromStdin.code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads the signal from stdin when there is no argument, and detects JSON', async () => {
    const run = await parse(
      [],
      '{"symbol":"eurusd","action":"BUY","volume":0.1,"volumeType":"lots","sl":20,"slType":"pips","tp":40,"tpType":"pips"}\n',
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toStrictEqual(EXAMPLE);
  });

  it('reads text from stdin, a trailing newline included', async () => {
    const run = await parse([], 'EURUSD,buy,vol=0.1,sl_pips=20,tp_pips=40\n');
    expect(JSON.parse(run.stdout)).toStrictEqual(EXAMPLE);
  });

  it('prints every problem on stderr and exits 1', async () => {
    const run = await parse(['EURUSD,buyy,sl=20']);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      [
        'the signal is not valid (2 problems):',
        "  UNKNOWN_ACTION [action]: unknown action 'buyy'; did you mean buy?",
        "  UNKNOWN_PARAMETER [sl]: unknown parameter 'sl'; did you mean sl_pips, sl_price or sl_percent?",
        '',
      ].join('\n'),
    );
  });

  it('prints the problems as JSON on stdout with --json', async () => {
    const run = await parse(['--json', 'EURUSD,buy,vol_dollar=100']);
    expect(run.code).toBe(1);
    const problem = {
      code: 'SL_REQUIRED',
      param: 'vol_dollar',
      detail:
        'vol_dollar sizes the trade from the loss at the stop loss, so it needs one: add sl_pips, sl_price or sl_percent',
    };
    expect(JSON.parse(run.stdout)).toStrictEqual({ ...problem, errors: [problem] });
  });

  it('reports a parse error without a param', async () => {
    const run = await parse(['--json'], 'EURUSD,buy\nGBPUSD,sell\n');
    expect(run.code).toBe(1);
    const answer = JSON.parse(run.stdout);
    expect(answer).toMatchObject({ code: 'PARSE_ERROR', detail: expect.stringMatching(/2 non-blank lines/) });
    expect(answer).not.toHaveProperty('param');
  });

  it('honours --format over what the body looks like', async () => {
    const asText = await parse(['--format', 'text', '--json', '{"symbol":"EURUSD","action":"buy"}']);
    expect(asText.code).toBe(1);
    expect(JSON.parse(asText.stdout)).toMatchObject({
      code: 'PARSE_ERROR',
      detail: expect.stringMatching(/^the body is a JSON object but is read as the text form/),
    });
    const asJson = await parse(['--format', 'json', '--json', 'EURUSD,buy']);
    expect(JSON.parse(asJson.stdout)).toMatchObject({
      code: 'PARSE_ERROR',
      detail: expect.stringMatching(/^the body must be one JSON object|^malformed JSON/),
    });
    const auto = await parse(['  \n {"symbol":"EURUSD","action":"buy"}']);
    expect(JSON.parse(auto.stdout)).toStrictEqual({ symbol: 'EURUSD', action: 'buy' });
  });

  it('refuses an unknown --format', async () => {
    const run = await parse(['--format', 'xml', 'EURUSD,buy']);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/argument 'xml' is invalid\. Allowed choices are text, json, auto/);
  });

  it('refuses stdin that is not UTF-8', async () => {
    const run = await parse([], Buffer.from([0x45, 0x55, 0x52, 0xff, 0x2c, 0x62, 0x75, 0x79]));
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/PARSE_ERROR: the input is not valid UTF-8/);
  });

  it('tolerates a byte order mark on stdin', async () => {
    const run = await parse(
      [],
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"symbol":"EURUSD","action":"buy"}')]),
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toStrictEqual({ symbol: 'EURUSD', action: 'buy' });
  });
});
