import { mkdirSync, mkdtempSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { NormalizedSignal } from '../../src/language/index.js';
import type { EffectiveRiskRules } from '../../src/risk/risk-rules.js';
import { waitUntil } from '../delivery/support/delivery-setup.js';
import { AgentEndpoints } from './support/agent-endpoints.js';
import { AgentProcess } from './support/agent-process.js';
import { readJournal } from './support/journal-file.js';

/**
 * A real `signalgate agent --paper` process checking the risk rules its deliveries carry
 * (docs/agents.md, "Risk rules"), before anything leaves: each rule at, below and above its limit,
 * closes never refused, the day's entries kept across a restart, and a flatten.
 */
describe('a paper agent checks the risk rules each signal carries', () => {
  let endpoints: AgentEndpoints | null = null;
  let agent: AgentProcess | null = null;
  let dir = '';
  afterEach(async () => {
    await agent?.kill();
    await endpoints?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    [agent, endpoints, dir] = [null, null, ''];
  });

  async function start(): Promise<void> {
    endpoints ??= await AgentEndpoints.start();
    dir ||= mkdtempSync(path.join(tmpdir(), 'signalgate-risk-paper-'));
    agent = AgentProcess.start(endpoints.url, 'sga_risk', dir, ['--transport', 'long-poll', '--seed', '7']);
    await agent.waitForLog((l) => l.msg === 'paper account ready', 'the paper account ready');
  }
  const rules = (over: Partial<EffectiveRiskRules>): EffectiveRiskRules => ({ tradingWindows: [], ...over });
  async function send(signal: NormalizedSignal, extra: Parameters<AgentEndpoints['deliver']>[1] = {}) {
    const id = endpoints!.deliver(signal, extra);
    await waitUntil(() => endpoints!.acks.has(id), `the ack of ${id}`, 20_000);
    return endpoints!.acks.get(id)!;
  }
  const buy = (lots: number, symbol = 'EURUSD'): NormalizedSignal => ({
    symbol,
    action: 'buy',
    volume: { type: 'lots', value: lots },
  });

  it('maxLotsPerOrder below, at and above its limit; a close under any rule', async () => {
    await start();
    const risk = rules({ maxLotsPerOrder: 0.3 });
    expect((await send(buy(0.2), { risk })).status).toBe('executed');
    expect((await send(buy(0.3), { risk })).status).toBe('executed');
    const above = await send(buy(0.31), { risk });
    expect(above).toMatchObject({
      status: 'rejected',
      result: { code: 'RISK_LIMIT', rule: 'maxLotsPerOrder', limit: 0.3, value: 0.31 },
    });
    expect(above.message).toBe(
      'risk rule maxLotsPerOrder (limit 0.3, value 0.31): the order of 0.31 lots EURUSD is above the limit',
    );
    // The day, the window and the total loss: every rule names itself.
    const never = { timeZone: 'Europe/London', days: [], from: '07:00', until: '21:00' };
    expect(await send(buy(0.1), { risk: rules({ tradingWindows: [never] }) })).toMatchObject({
      status: 'rejected',
      result: { code: 'RISK_LIMIT', rule: 'tradingWindows' },
    });
    // A 10,000 account against a 20,000 starting balance with a 10 % limit: 10,000 lost, above 2,000.
    const total = rules({ maxTotalLoss: { percent: 10, startingBalance: 20_000 } });
    expect((await send(buy(0.1), { risk: total })).result).toMatchObject({ rule: 'maxTotalLoss', limit: '10 %' });
    const fine = rules({ maxTotalLoss: { percent: 10, startingBalance: 10_500 } });
    expect((await send(buy(0.1), { risk: fine })).status).toBe('executed');
    // Reducing risk is always allowed, whatever the rules say.
    const strict = rules({ maxLotsPerOrder: 0.01, allowedSymbols: [], maxOpenPositions: 0 });
    expect((await send({ symbol: 'EURUSD', action: 'closeall' }, { risk: strict })).status).toBe('executed');
  });

  it('maxEntriesPerDay counts the day’s entries across a restart; maxOpenPositions and symbol lists', async () => {
    await start();
    const risk = rules({ maxEntriesPerDay: 2 });
    expect((await send(buy(0.1), { risk })).status).toBe('executed');
    // An entry without rules counts too: the rule holds for the day, whenever it was set.
    expect((await send(buy(0.1))).status).toBe('executed');
    expect(await send(buy(0.1), { risk })).toMatchObject({
      status: 'rejected',
      result: { rule: 'maxEntriesPerDay', limit: 2, value: 3 },
    });
    // Written within a second of the entries (the journal carries them meanwhile).
    await waitUntil(
      () => riskDays(dir)?.entryMinutes.reduce((n, [, count]) => n + count, 0) === 2,
      'both entries in risk-days.json',
      10_000,
    );
    // Counts by minute; of the signals' ids at most the two entries' (kept while the journal
    // on disk carries them, gone once a journal write without them is durable).
    expect(Object.keys(riskDays(dir)!.counting).length).toBeLessThanOrEqual(2);
    await agent!.kill();
    await start();
    expect((await send(buy(0.1), { risk: rules({ maxEntriesPerDay: 3 }) })).status).toBe('executed');
    expect((await send(buy(0.1), { risk: rules({ maxEntriesPerDay: 3 }) })).result).toMatchObject({
      rule: 'maxEntriesPerDay',
      value: 4,
    });
    // Three positions open (hedging: each entry its own).
    expect((await send(buy(0.1), { risk: rules({ maxOpenPositions: 4 }) })).status).toBe('executed');
    expect((await send(buy(0.1), { risk: rules({ maxOpenPositions: 4 }) })).result).toMatchObject({
      rule: 'maxOpenPositions',
      value: 5,
    });
    expect((await send(buy(0.1, 'GBPUSD'), { risk: rules({ allowedSymbols: ['EURUSD'] }) })).result).toMatchObject({
      rule: 'allowedSymbols',
      value: 'GBPUSD',
    });
    expect((await send(buy(0.1), { risk: rules({ refusedSymbols: ['eurusd'] }) })).result).toMatchObject({
      rule: 'refusedSymbols',
    });
  });

  it('an entry acked and the agent killed before risk-days.json holds it: counted after the restart', async () => {
    await start();
    const risk = rules({ maxEntriesPerDay: 2 });
    const counted = () => riskDays(dir)?.entryMinutes.reduce((n, [, count]) => n + count, 0);
    expect((await send(buy(0.1), { risk })).status).toBe('executed');
    await waitUntil(() => counted() === 1, 'the first entry in risk-days.json', 10_000);
    // risk-days.json can no longer be written: its temporary file's name is taken by a directory.
    const blocked = path.join(agentDir(dir), `risk-days.json.${agent!.child.pid}.tmp`);
    mkdirSync(blocked);
    const second = endpoints!.deliver(buy(0.1), { risk });
    await waitUntil(() => endpoints!.acks.has(second), `the ack of ${second}`, 20_000);
    await agent!.kill();
    expect(endpoints!.acks.get(second)!.status).toBe('executed');
    expect(counted()).toBe(1);
    const journal = readJournal(path.join(agentDir(dir), 'paper-account.json')) as {
      riskEntries?: Record<string, [number, number]>;
    };
    // The first's too if its write of risk-days.json was renamed, not yet synced, at this snapshot.
    expect(Object.keys(journal.riskEntries ?? {})).toContain(second);
    rmdirSync(blocked);

    await start();
    expect(counted()).toBe(2);
    expect(await send(buy(0.1), { risk })).toMatchObject({
      status: 'rejected',
      result: { rule: 'maxEntriesPerDay', limit: 2, value: 3 },
    });
  });

  it('rules removed (a signal without any) are no longer measured by the loss watch', async () => {
    await start();
    const watched = () => (readJournal(path.join(agentDir(dir), 'risk-days.json')) as { rules: object }).rules;
    expect((await send(buy(0.1), { risk: rules({ maxDailyLoss: { amount: 100_000 } }) })).status).toBe('executed');
    expect(watched()).toEqual({ src_test: expect.objectContaining({ maxDailyLoss: { amount: 100_000 } }) });
    // The account's rules deleted through the API: the next signal carries none, and a loss
    // limit that no longer exists must not halt the account later.
    expect((await send(buy(0.1))).status).toBe('executed');
    expect(watched()).toEqual({});
  });

  it('maxNotionalPerOrder and maxPositionLots in the account currency and lots', async () => {
    await start();
    // About 1.085 × 100,000 × 0.1 = 10,850 USD.
    expect((await send(buy(0.1), { risk: rules({ maxNotionalPerOrder: 20_000 }) })).status).toBe('executed');
    const notional = await send(buy(0.2), { risk: rules({ maxNotionalPerOrder: 20_000 }) });
    expect(notional.result).toMatchObject({ rule: 'maxNotionalPerOrder', limit: 20_000 });
    expect(notional.result.value).toBeGreaterThan(20_000);
    expect((await send(buy(0.2), { risk: rules({ maxPositionLots: 0.3 }) })).status).toBe('executed');
    expect((await send(buy(0.01), { risk: rules({ maxPositionLots: 0.3 }) })).result).toMatchObject({
      rule: 'maxPositionLots',
      value: 0.31,
    });
  });

  it('a flatten closes every position and cancels every pending order, on every symbol', async () => {
    await start();
    expect((await send(buy(0.1))).status).toBe('executed');
    expect((await send(buy(0.2, 'GBPUSD'))).status).toBe('executed');
    const limit: NormalizedSignal = {
      symbol: 'GBPUSD',
      action: 'buylimit',
      volume: { type: 'lots', value: 0.1 },
      entry: { type: 'pips', value: 200 },
    };
    expect((await send(limit)).status).toBe('executed');
    const flat = await send({ symbol: '*', action: 'positionflat' }, { flatten: { reason: 'kill switch' } });
    expect(flat.status).toBe('executed');
    expect(flat.message).toContain('flattened (kill switch)');
    expect(flat.result.remaining).toEqual({ positions: [], orders: [] });
    expect(flat.result.items.map((i: { symbol: string }) => i.symbol)).toEqual(['EURUSD', 'GBPUSD']);
    // Nothing is left to close.
    expect((await send({ symbol: 'GBPUSD', action: 'closeall' })).status).toBe('rejected');
  });
});

/** The agent's risk-days.json, or undefined before its first write. */
function riskDays(dataDir: string): { entryMinutes: [number, number][]; counting: Record<string, number> } | undefined {
  try {
    return readJournal(path.join(agentDir(dataDir), 'risk-days.json'));
  } catch {
    return undefined;
  }
}

function agentDir(dataDir: string): string {
  const agents = path.join(dataDir, 'agents');
  const [only] = readdirSync(agents);
  return path.join(agents, only!);
}
