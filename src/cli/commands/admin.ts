import { type Command, InvalidArgumentError, Option } from 'commander';
import {
  accountUsage,
  createAccount,
  dailyUsage,
  listAccounts,
  showAccount,
  updateAccount,
} from '../../admin/accounts.js';
import type { AdminResult } from '../../admin/admin-result.js';
import { createAgent, deleteAgent, listAgents, rotateAgentToken, showAgent } from '../../admin/agents.js';
import { cliPublicUrl } from '../../admin/recorded-public-url.js';
import { listSignals, showSignal } from '../../admin/signals.js';
import {
  createSource,
  deleteSource,
  listSources,
  rotateSourceKey,
  showSource,
  updateSource,
} from '../../admin/sources.js';
import { problemBody } from '../../errors/problem-body.js';
import type { Store } from '../../store/store.js';
import { hmacSecretOption } from './hmac-secret-option.js';
import { withStore } from './with-store.js';

/**
 * The admin operations as CLI subcommands, working directly on the store the server uses
 * (same SIGNALGATE_DATA_DIR or SIGNALGATE_DATABASE_URL) and printing the API's JSON.
 */
export function registerAdminCommands(program: Command): void {
  // `--create` is the program's option (main.ts), given before or after the subcommand.
  const run = <T>(operation: (store: Store, publicUrl: string) => Promise<AdminResult<T>>) =>
    runOnStore(operation, program.opts<{ create?: boolean }>().create === true);
  const accounts = program.command('accounts').description('accounts and their monthly quota');
  accounts
    .command('create')
    .requiredOption('--name <name>', 'account name')
    .requiredOption('--quota <n>', 'monthly signal quota', wholeNumber)
    .action((o: { name: string; quota: number }) =>
      run((store) => createAccount(store, { name: o.name, monthlySignalQuota: o.quota }, Date.now())),
    );
  accounts.command('show <accountId>').action((id: string) => run((store) => showAccount(store, id)));
  accounts
    .command('list')
    .description("accounts, newest first, a page at a time (pass the answer's next as --before for the following page)")
    .option('--limit <n>', 'accounts per page (default 50, at most 500)')
    .option('--before <accountId>')
    .action((o: { limit?: string; before?: string }) =>
      run((store) => listAccounts(store, { limit: o.limit, before: o.before })),
    );
  accounts
    .command('update <accountId>')
    .description('rename the account or change its monthly quota (a new quota holds at once, for this month too)')
    .option('--name <name>', 'account name')
    .option('--quota <n>', 'monthly signal quota', wholeNumber)
    .action((id: string, o: { name?: string; quota?: number }) =>
      run((store) =>
        updateAccount(store, id, {
          ...(o.name !== undefined && { name: o.name }),
          ...(o.quota !== undefined && { monthlySignalQuota: o.quota }),
        }),
      ),
    );
  accounts
    .command('usage <accountId>')
    .description("this month's usage")
    .action((id: string) => run((store) => accountUsage(store, id, Date.now())));
  accounts
    .command('daily-usage <accountId>')
    .description('signals per UTC day (accepted and rejected) for the last --days days, today included')
    .option('--days <n>', 'how many days (default 30, at most 366)')
    .action((id: string, o: { days?: string }) => run((store) => dailyUsage(store, id, { days: o.days }, Date.now())));

  const agents = program.command('agents').description('executing agents');
  agents
    .command('create')
    .requiredOption('--account <accountId>')
    .requiredOption('--name <name>')
    .action((o: { account: string; name: string }) =>
      run((store) => createAgent(store, o.account, { name: o.name }, Date.now())),
    );
  agents.command('show <agentId>').action((id: string) => run((store) => showAgent(store, id)));
  agents
    .command('list')
    .description('agents, newest first, a page at a time')
    .option('--account <accountId>', "only this account's agents")
    .option('--limit <n>', 'agents per page (default 50, at most 500)')
    .option('--before <agentId>')
    .action((o: { account?: string; limit?: string; before?: string }) =>
      run((store) => listAgents(store, { accountId: o.account, limit: o.limit, before: o.before })),
    );
  agents
    .command('rotate-token <agentId>')
    .description('give the agent a new token (printed once); the old one is refused at once and its connections close')
    .action((id: string) => run((store) => rotateAgentToken(store, id, undefined)));
  agents
    .command('delete <agentId>')
    .description(
      'remove the agent, its token and its deliveries (nothing queued for it is ever handed out); refused while a source routes to it by id',
    )
    .action((id: string) => run(async (store) => deleted(id, await deleteAgent(store, id))));

  const sources = program.command('sources').description('inbound signal sources');
  sources
    .command('create')
    .description('make a source; its authKey and inboundUrl are printed this once (only their digest is kept)')
    .requiredOption('--account <accountId>')
    .requiredOption('--name <name>')
    .option(
      '--hmac-secret <secret>',
      'require signed requests; visible to every user in the process list, so prefer --hmac-secret-file',
    )
    .addOption(
      new Option(
        '--hmac-secret-file <file>',
        'require requests signed with the secret in this file (- reads standard input)',
      ).conflicts('hmacSecret'),
    )
    .option('--agents <ids>', 'comma-separated agent ids to route to (default: every agent of the account)', idList)
    .option('--max-age <seconds>', 'maxSignalAgeSeconds', wholeNumber)
    .option(
      '--duplicate-window <seconds>',
      "duplicateWindowSeconds: answer an entry repeating the previous signal's body within this many seconds as that signal (0: off)",
      wholeNumber,
    )
    .option(
      '--allowed-ips <list>',
      `comma-separated addresses, CIDR ranges or 'tradingview' requests are taken from (default: any)`,
      entryList,
    )
    .action(
      (o: {
        account: string;
        name: string;
        hmacSecret?: string;
        hmacSecretFile?: string;
        agents?: string[];
        maxAge?: number;
        duplicateWindow?: number;
        allowedIps?: string[];
      }) => {
        const secret = hmacSecretOption(o);
        if (!secret.ok) return;
        return run((store, publicUrl) =>
          createSource(
            store,
            {
              accountId: o.account,
              name: o.name,
              ...(secret.secret !== undefined && { hmacSecret: secret.secret }),
              ...(o.agents !== undefined && { agentIds: o.agents }),
              ...(o.maxAge !== undefined && { maxSignalAgeSeconds: o.maxAge }),
              ...(o.duplicateWindow !== undefined && { duplicateWindowSeconds: o.duplicateWindow }),
              ...(o.allowedIps !== undefined && { allowedIps: o.allowedIps }),
            },
            Date.now(),
            publicUrl,
          ),
        );
      },
    );
  sources.command('show <sourceId>').action((id: string) => run((store, url) => showSource(store, id, url)));
  sources
    .command('list')
    .description('sources, newest first, a page at a time')
    .option('--account <accountId>', "only this account's sources")
    .option('--limit <n>', 'sources per page (default 50, at most 500)')
    .option('--before <sourceId>')
    .action((o: { account?: string; limit?: string; before?: string }) =>
      run((store, url) => listSources(store, { accountId: o.account, limit: o.limit, before: o.before }, url)),
    );
  sources
    .command('delete <sourceId>')
    .description(
      'remove the source with its signal log and the deliveries of its signals (deactivate it instead to keep the log)',
    )
    .action((id: string) => run(async (store) => deleted(id, await deleteSource(store, id))));
  sources
    .command('update <sourceId>')
    .option('--name <name>')
    .option('--active <bool>', 'true or false', boolean)
    .option(
      '--hmac-secret <secret>',
      'require requests signed with this secret; visible to every user in the process list, so prefer --hmac-secret-file',
    )
    .addOption(
      new Option(
        '--hmac-secret-file <file>',
        'require requests signed with the secret in this file (- reads standard input)',
      ).conflicts('hmacSecret'),
    )
    .addOption(
      new Option(
        '--clear-hmac-secret',
        'stop requiring signatures (not with --hmac-secret or --hmac-secret-file)',
      ).conflicts(['hmacSecret', 'hmacSecretFile']),
    )
    .option('--agents <ids>', 'comma-separated agent ids; "" for every agent of the account', idList)
    .option('--max-age <seconds>', 'maxSignalAgeSeconds', wholeNumber)
    .option('--duplicate-window <seconds>', 'duplicateWindowSeconds (0: off)', wholeNumber)
    .option(
      '--allowed-ips <list>',
      `comma-separated addresses, CIDR ranges or 'tradingview'; "" for any address`,
      entryList,
    )
    .action(
      (
        id: string,
        o: {
          name?: string;
          active?: boolean;
          hmacSecret?: string;
          hmacSecretFile?: string;
          clearHmacSecret?: boolean;
          agents?: string[];
          maxAge?: number;
          duplicateWindow?: number;
          allowedIps?: string[];
        },
      ) => {
        const secret = hmacSecretOption(o);
        if (!secret.ok) return;
        return run((store, url) =>
          updateSource(
            store,
            id,
            {
              ...(o.name !== undefined && { name: o.name }),
              ...(o.active !== undefined && { active: o.active }),
              ...(secret.secret !== undefined && { hmacSecret: secret.secret }),
              ...(o.clearHmacSecret && { hmacSecret: null }),
              ...(o.agents !== undefined && { agentIds: o.agents }),
              ...(o.maxAge !== undefined && { maxSignalAgeSeconds: o.maxAge }),
              ...(o.duplicateWindow !== undefined && { duplicateWindowSeconds: o.duplicateWindow }),
              ...(o.allowedIps !== undefined && { allowedIps: o.allowedIps }),
            },
            Date.now(),
            url,
          ),
        );
      },
    );
  sources
    .command('rotate-key <sourceId>')
    .description('give the source a new key (printed once, with its inboundUrl); the old one is refused at once')
    .action((id: string) => run((store, url) => rotateSourceKey(store, id, undefined, Date.now(), url)));

  const signals = program.command('signals').description('the signal log');
  signals
    .command('list')
    .option('--source <sourceId>')
    .option('--status <status>', 'accepted, rejected or duplicate')
    .option('--outcome <status>', 'signals with a delivery queued, delivered, executed, rejected, failed or expired')
    .option('--symbol <symbol>')
    .option('--limit <n>')
    .option('--before <signalId>', 'the next of the previous page')
    .action(
      (o: { source?: string; status?: string; outcome?: string; symbol?: string; limit?: string; before?: string }) =>
        run((store) =>
          listSignals(store, {
            sourceId: o.source,
            status: o.status,
            outcome: o.outcome,
            symbol: o.symbol,
            limit: o.limit,
            before: o.before,
          }),
        ),
    );
  signals.command('show <signalId>').action((id: string) => run((store) => showSignal(store, id)));
}

async function runOnStore<T>(
  operation: (store: Store, publicUrl: string) => Promise<AdminResult<T>>,
  create: boolean,
): Promise<void> {
  await withStore(
    async (store, config) => {
      const result = await operation(store, await cliPublicUrl(store, config));
      if (result.ok) {
        process.stdout.write(`${JSON.stringify(result.value, null, 2)}\n`);
      } else {
        process.stderr.write(`${JSON.stringify(problemBody(result.problems), null, 2)}\n`);
        process.exitCode = 1;
      }
    },
    { create },
  );
}

/** What a delete prints: the id it removed. */
function deleted(id: string, result: AdminResult<null>): AdminResult<{ deleted: string }> {
  return result.ok ? { ok: true, value: { deleted: id } } : result;
}

function wholeNumber(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a whole number');
  return Number(value);
}

function boolean(value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new InvalidArgumentError('expected true or false');
}

/** A comma-separated list where an empty entry is kept, so that the check names it; "" is the empty list. */
function entryList(value: string): string[] {
  return value.trim() === '' ? [] : value.split(',').map((v) => v.trim());
}

function idList(value: string): string[] {
  return value
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');
}
