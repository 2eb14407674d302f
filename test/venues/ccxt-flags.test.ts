import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/** `signalgate agent --venue …` flag checks, on the built CLI: each refusal exits 2 naming the flag, before any connection. */
const CLI = path.resolve('dist/cli/main.js');
const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-venue-flags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function agent(args: string[], env: Record<string, string> = {}) {
  const run = spawnSync(process.execPath, [CLI, 'agent', '--server', 'http://127.0.0.1:9', '--token', 't', ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', SIGNALGATE_DATA_DIR: dir, ...env },
    timeout: 20_000,
  });
  return { status: run.status, stderr: run.stderr };
}

describe('signalgate agent --venue', () => {
  it('needs a venue, and --paper is the short form of --venue paper only', () => {
    expect(agent([])).toMatchObject({
      status: 2,
      stderr: expect.stringContaining(
        'choose where to execute: --venue paper (or --paper), --venue ccxt --exchange ID or --venue fix --fix-config FILE',
      ),
    });
    expect(agent(['--paper', '--venue', 'ccxt'])).toMatchObject({
      status: 2,
      stderr: expect.stringContaining('--paper is the short form of --venue paper'),
    });
    expect(agent(['--venue', 'nosuch'])).toMatchObject({
      status: 2,
      stderr: expect.stringContaining('--venue must be paper, ccxt or fix, got "nosuch"'),
    });
    expect(agent(['--venue', 'fix'])).toMatchObject({
      status: 2,
      stderr: expect.stringContaining('--venue fix needs --fix-config FILE'),
    });
  });

  it('ccxt: needs --exchange, a known exchange id, and API keys unless --dry-run', () => {
    expect(agent(['--venue', 'ccxt'])).toMatchObject({
      status: 2,
      stderr: expect.stringContaining('--venue ccxt needs --exchange ID'),
    });
    expect(agent(['--venue', 'ccxt', '--exchange', 'nosuchexchange', '--dry-run'])).toMatchObject({
      status: 2,
      stderr: expect.stringContaining('--exchange nosuchexchange is not an exchange CCXT knows'),
    });
    expect(agent(['--venue', 'ccxt', '--exchange', 'binance'])).toMatchObject({
      status: 2,
      stderr: expect.stringContaining("needs the exchange's API keys: --credentials FILE"),
    });
    expect(agent(['--venue', 'ccxt', '--exchange', 'binance'], { SIGNALGATE_CCXT_API_KEY: 'k' })).toMatchObject({
      status: 2,
      stderr: expect.stringContaining('give both SIGNALGATE_CCXT_API_KEY and SIGNALGATE_CCXT_SECRET, or neither'),
    });
  });

  it('ccxt: takes no key on the command line (there is no such flag), and never echoes a credentials file it cannot use', () => {
    expect(agent(['--venue', 'ccxt', '--exchange', 'binance', '--api-key', 'SECRETKEY'])).toMatchObject({
      status: 2,
      stderr: expect.stringContaining("unknown option '--api-key'"),
    });
    const file = path.join(dir, 'keys.json');
    writeFileSync(file, '{"apiKey": "AKEY", "secret": "TOPSECRET",');
    chmodSync(file, 0o600);
    const broken = agent(['--venue', 'ccxt', '--exchange', 'binance', '--credentials', file]);
    expect(broken).toMatchObject({ status: 2, stderr: expect.stringContaining('is not JSON') });
    expect(broken.stderr).not.toContain('TOPSECRET');
  });

  it('ccxt: refuses the paper-only flags and unknown market kinds and modes', () => {
    expect(agent(['--venue', 'ccxt', '--exchange', 'binance', '--dry-run', '--balance', '5'])).toMatchObject({
      status: 2,
      stderr: expect.stringContaining('--balance only apply to the paper account'),
    });
    expect(agent(['--venue', 'ccxt', '--exchange', 'binance', '--dry-run', '--market', 'future'])).toMatchObject({
      status: 2,
      stderr: expect.stringContaining('--market must be spot or swap, got "future"'),
    });
    expect(
      agent(['--venue', 'ccxt', '--exchange', 'binance', '--dry-run', '--market', 'spot', '--position-mode', 'hedge']),
    ).toMatchObject({
      status: 2,
      stderr: expect.stringContaining('--position-mode hedge applies to swap markets only'),
    });
  });
});
