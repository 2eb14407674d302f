import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { runCli, useCliStore } from '../support/cli-store.js';

const { env } = useCliStore();

describe('signalgate ledger', () => {
  it('lists the trades, exports them as CSV and prints their figures; an unknown account exits 1', async () => {
    const account = JSON.parse((await runCli(env, 'accounts', 'create', '--name', 'Desk', '--quota', '10')).stdout);
    const agent = JSON.parse((await runCli(env, 'agents', 'create', '--account', account.id, '--name', 'v')).stdout);
    // What an agent reported: a short of 2 lots at 50 (fee 1), bought back at 47 (fee 1).
    const store = await openStore({
      dataDir: env.SIGNALGATE_DATA_DIR!,
      databaseUrl: env.SIGNALGATE_DATABASE_URL ?? null,
    });
    const base = { symbol: 'XYZ', feeCurrency: 'USD', signalId: null, fee: 1, lots: 2 };
    await store.ledger.record(
      { id: agent.id, accountId: account.id },
      [
        { ...base, venueFillId: 'a', orderId: '1', side: 'sell', price: 50, at: '2026-12-01T10:00:00.000Z' },
        { ...base, venueFillId: 'b', orderId: '2', side: 'buy', price: 47, at: '2026-12-01T12:00:00.000Z' },
      ],
      [],
      '2026-12-01T12:00:01.000Z',
    );
    await store.close();

    const trades = await runCli(env, 'ledger', 'trades', '--account', account.id);
    expect(trades.code, trades.stderr).toBe(0);
    // 2 × (50 − 47) = 6, less fees 2: 4.
    expect(JSON.parse(trades.stdout).trades).toMatchObject([{ side: 'short', lots: 2, fees: 2, realizedProfit: 4 }]);
    const csv = await runCli(env, 'ledger', 'export', '--account', account.id, '--symbol', 'xyz');
    expect(csv.stdout.split('\r\n')[1]).toContain(
      ',XYZ,short,2,2026-12-01T10:00:00.000Z,50,2026-12-01T12:00:00.000Z,47,2,0,4,',
    );
    const stats = await runCli(
      env,
      'ledger',
      'stats',
      '--account',
      account.id,
      '--from',
      '2026-12-01',
      '--until',
      '2026-12-02',
    );
    expect(JSON.parse(stats.stdout).statistics).toMatchObject({ trades: 1, wins: 1, netProfit: 4, winRate: 1 });
    const unknown = await runCli(env, 'ledger', 'trades', '--account', 'acc_nope');
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stderr)).toMatchObject({ code: 'NOT_FOUND', param: 'accountId' });
  });
});
