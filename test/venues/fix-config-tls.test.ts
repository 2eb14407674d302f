import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readFixConfig } from '../../src/agent/venues/fix/fix-config.js';

const session = { host: 'fix.example.com', port: 5212, senderCompId: 'me', targetCompId: 'cServer' };

function read(config: object) {
  const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-fix-config-'));
  try {
    const file = path.join(dir, 'fix.json');
    writeFileSync(file, JSON.stringify({ account: { currency: 'USD', balance: 1000 }, ...config }));
    const read = readFixConfig(file, undefined, {});
    if (!read.ok) throw new Error(read.message);
    return { ...read.value, file };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('a FIX session file and TLS', () => {
  it('a session without "tls" is TLS, and nothing is said', () => {
    const { config, warnings } = read({ trade: session, quote: { ...session, port: 5211 } });
    expect([config.trade.tls, config.quote!.tls]).toEqual([true, true]);
    expect(warnings).toEqual([]);
  });

  it('"tls": false is taken, with a warning per plain session that the password crosses the network in clear', () => {
    const { config, warnings, file } = read({ trade: { ...session, tls: false }, quote: { ...session, tls: true } });
    expect([config.trade.tls, config.quote!.tls]).toEqual([false, true]);
    expect(warnings).toEqual([
      expect.stringContaining(`--fix-config ${file}: "trade"."tls" is false, so the FIX logon's username and password`),
    ]);
    expect(warnings[0]).toContain('remove "tls": false (TLS is the default)');
  });
});
