import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The systemd unit of operations.md, as a file named as the page names it. */
function documentedUnit(): string {
  const doc = readFileSync('docs/operations.md', 'utf8');
  const start = doc.indexOf('```ini\n', doc.indexOf('### Under systemd')) + '```ini\n'.length;
  return doc.slice(start, doc.indexOf('```\n', start));
}

describe("operations.md's systemd unit", () => {
  it('passes systemd-analyze verify, with ExecStart at a command that exists here', () => {
    const unit = documentedUnit();
    for (const setting of [
      'User=signalgate',
      'Restart=on-failure',
      'KillSignal=SIGTERM',
      'NoNewPrivileges=yes',
      'ProtectSystem=strict',
      'ReadWritePaths=/var/lib/signalgate',
    ]) {
      expect(unit).toContain(`\n${setting}\n`);
    }
    expect(unit).toContain('Environment=SIGNALGATE_DATA_DIR=/var/lib/signalgate');
    expect(unit).toMatch(/\nExecStart=\/usr\/local\/bin\/signalgate serve\n/);
    // verify checks that ExecStart is executable: the checkout's build stands for the installed command.
    const command = path.resolve('dist/cli/main.js');
    accessSync(command, constants.X_OK);
    const file = path.join(dir, 'signalgate.service');
    writeFileSync(file, unit.replace('ExecStart=/usr/local/bin/signalgate', `ExecStart=${command}`));
    const verify = spawnSync('systemd-analyze', ['verify', '--man=no', file], { encoding: 'utf8' });
    expect(verify.error).toBeUndefined();
    // An unknown or misspelt setting is only a warning (exit 0): any line about the unit fails.
    expect(verify.stderr.split('\n').filter((line) => line.includes('signalgate.service'))).toEqual([]);
    expect(verify.status, verify.stderr).toBe(0);
  });
});
