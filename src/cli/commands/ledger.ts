import type { Command } from 'commander';
import type { AdminResult } from '../../admin/admin-result.js';
import { ledgerCsv, ledgerStatisticsOf, ledgerTrades } from '../../admin/ledger.js';
import { problemBody } from '../../errors/problem-body.js';
import type { Store } from '../../store/store.js';
import { withStore } from './with-store.js';

interface LedgerFlags {
  account: string;
  agent?: string;
  source?: string;
  strategy?: string;
  symbol?: string;
  from?: string;
  until?: string;
}

/**
 * `signalgate ledger trades|stats|export`: the account's trades, their figures and their CSV
 * (docs/ledger.md), on the store the server uses, with the filters of the admin API.
 */
export function registerLedgerCommands(program: Command): void {
  const ledger = program.command('ledger').description("an account's trades from its venues' fills (docs/ledger.md)");
  const withFilters = (command: Command) =>
    command
      .requiredOption('--account <accountId>', 'the account whose ledger')
      .option('--agent <agentId>', "only this agent's trades")
      .option('--source <sourceId>', 'only trades opened by signals of this source')
      .option('--strategy <comment>', "only trades whose opening signal's comment is this")
      .option('--symbol <symbol>', "only this symbol (the venue's)")
      .option('--from <time>', 'trades closed at or after this time, e.g. 2026-12-01')
      .option('--until <time>', 'trades closed before this time');
  withFilters(ledger.command('trades').description('the trades, oldest entry first, as JSON')).action(
    (o: LedgerFlags) => run((store) => ledgerTrades(store, queryOf(o)), 'json'),
  );
  withFilters(
    ledger.command('stats').description('net profit, win rate, profit factor, drawdown, latency and slippage, as JSON'),
  ).action((o: LedgerFlags) => run((store) => ledgerStatisticsOf(store, queryOf(o)), 'json'));
  withFilters(ledger.command('export').description('the trades as CSV on standard output')).action((o: LedgerFlags) =>
    run((store) => ledgerCsv(store, queryOf(o)), 'text'),
  );
}

function queryOf(o: LedgerFlags): Record<string, string | undefined> {
  return {
    accountId: o.account,
    agentId: o.agent,
    sourceId: o.source,
    strategy: o.strategy,
    symbol: o.symbol,
    from: o.from,
    until: o.until,
  };
}

async function run(operation: (store: Store) => Promise<AdminResult<unknown>>, as: 'json' | 'text'): Promise<void> {
  await withStore(async (store) => {
    const result = await operation(store);
    if (result.ok) {
      process.stdout.write(as === 'text' ? String(result.value) : `${JSON.stringify(result.value, null, 2)}\n`);
    } else {
      process.stderr.write(`${JSON.stringify(problemBody(result.problems), null, 2)}\n`);
      process.exitCode = 1;
    }
  });
}
