import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, useCliStore } from '../support/cli-store.js';

const { env } = useCliStore();

describe('signalgate risk', () => {
  it('sets rules from a file, refuses a bad one naming the field, halts and releases, all in the audit log', async () => {
    const account = JSON.parse((await runCli(env, 'accounts', 'create', '--name', 'Desk', '--quota', '10')).stdout);
    const file = path.join(env.SIGNALGATE_DATA_DIR!, 'rules.json');
    writeFileSync(file, JSON.stringify({ maxDailyLoss: { percent: 5 }, maxLotsPerOrder: 2 }));
    const set = await runCli(env, 'risk', 'rules', 'set', '--account', account.id, '--file', file);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ rules: { maxDailyLoss: { percent: 5 }, maxLotsPerOrder: 2 } });

    writeFileSync(file, JSON.stringify({ maxDailyLoss: { percent: 500 } }));
    const bad = await runCli(env, 'risk', 'rules', 'set', '--account', account.id, '--file', file);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('maxDailyLoss.percent');

    const halted = await runCli(env, 'risk', 'halt', '--account', account.id, '--reason', 'weekend');
    expect(halted.code, halted.stderr).toBe(0);
    expect(JSON.parse(halted.stdout).halt).toMatchObject({ reason: 'weekend', haltedBy: 'command line' });
    expect(JSON.parse((await runCli(env, 'risk', 'halts')).stdout).halts).toHaveLength(1);
    const both = await runCli(env, 'risk', 'release', '--account', account.id, '--agent', 'agt_x');
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('give exactly one of');
    expect((await runCli(env, 'risk', 'release', '--account', account.id)).code).toBe(0);
    const audit = JSON.parse((await runCli(env, 'risk', 'audit', '--account', account.id)).stdout);
    expect(audit.entries.map((e: { action: string }) => e.action)).toEqual(['released', 'halted', 'rules_set']);
  });
});
