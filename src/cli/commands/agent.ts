import type { Command, CommanderError } from 'commander';
import { AgentSetupError, AgentUnauthorizedError } from '../../agent/agent-errors.js';
import {
  type AgentFlags,
  DEFAULT_BALANCE,
  DEFAULT_CURRENCY,
  type PaperSettings,
  readPaperSettings,
} from '../../agent/venues/paper/paper-options.js';
import { AGENT_TOKEN_VARIABLE, readAgentTokensFile } from '../../agent/agent-token-setting.js';
import { StoredAccountConflictError } from '../../agent/venues/paper/stored-account-conflict.js';
import { createLogger, flushLogger } from '../../logging/logger.js';
import { type Venue, VenueRefusedError } from '../../agent/venue.js';
import type { Logger } from 'pino';
import { type CcxtFlags, CREDENTIAL_VARIABLES, readCcxtSettings } from '../../agent/venues/ccxt/ccxt-options.js';
import { FIX_CREDENTIAL_VARIABLES, readFixConfig } from '../../agent/venues/fix/fix-config.js';
import { DEFAULT_UNPROTECTED_AFTER, readUnprotectedRule, type UnprotectedRule } from '../../agent/protection-state.js';

/** The book reconciled every 5 s by default (the agent's RECONCILE_EVERY_MS, not imported: the agent module loads late). */
const RECONCILE_EVERY_MS = 5000;

interface GroupFlags {
  /** `--tokens-file`: several paper agents in this process. */
  tokensFile?: string;
}

interface WatchFlags {
  reconcileEvery?: string;
  fundingEvery?: string;
  unprotected?: string;
  unprotectedAfter?: string;
}

interface WatchSettings {
  reconcileEveryMs: number;
  /** ccxt: how often funding payments are read (absent: the agent's default). */
  fundingEveryMs?: number;
  unprotected: { rule: UnprotectedRule; after: number };
}

/** `--reconcile-every`, `--unprotected` and `--unprotected-after` of a venue elsewhere. */
function readWatchFlags(flags: WatchFlags): { ok: true; value: WatchSettings } | { ok: false; message: string } {
  const seconds = flags.reconcileEvery === undefined ? RECONCILE_EVERY_MS / 1000 : Number(flags.reconcileEvery);
  if (!Number.isFinite(seconds) || seconds < 1 || seconds > 3600)
    return {
      ok: false,
      message: `--reconcile-every must be a number of seconds from 1 to 3600, got "${flags.reconcileEvery}"`,
    };
  const funding = flags.fundingEvery === undefined ? null : Number(flags.fundingEvery);
  if (funding !== null && (!Number.isFinite(funding) || funding < 1 || funding > 3600))
    return {
      ok: false,
      message: `--funding-every must be a number of seconds from 1 to 3600, got "${flags.fundingEvery}"`,
    };
  const rule = readUnprotectedRule(flags.unprotected, flags.unprotectedAfter);
  if (!rule.ok) return rule;
  return {
    ok: true,
    value: {
      reconcileEveryMs: Math.round(seconds * 1000),
      ...(funding !== null && { fundingEveryMs: Math.round(funding * 1000) }),
      unprotected: { rule: rule.rule, after: rule.after },
    },
  };
}

/**
 * `signalgate agent --venue NAME` (`--paper` for `--venue paper`): the executing agent. Exit codes: 0 after
 * SIGTERM/SIGINT, 1 on a failure (disk), 2 on bad flags (commander's own errors included),
 * flags that contradict the stored account, or a token the server refuses.
 */
export function registerAgentCommand(program: Command): void {
  program
    .command('agent')
    .description(
      'run an executing agent: receives its signals, executes them on a venue (the paper account or an exchange), acknowledges them',
    )
    .requiredOption('--server <url>', 'signalgate base URL, e.g. http://127.0.0.1:8080')
    .option('--token-file <file>', 'a file holding the agent token (or SIGNALGATE_AGENT_TOKEN)')
    .option(
      '--token <token>',
      'the agent token; visible to every user in the process list, so prefer --token-file or SIGNALGATE_AGENT_TOKEN',
    )
    .option(
      '--venue <name>',
      'where to execute: paper (a simulated account), ccxt (a crypto exchange) or fix (a FIX 4.4 broker)',
    )
    .option('--paper', 'the short form of --venue paper')
    .option(
      '--tokens-file <file>',
      'paper: several agents in this one process, a file holding their tokens one per line (each agent its own account)',
    )
    // No commander defaults: whether they were given decides the warning on a restart.
    .option('--balance <amount>', `starting balance of a new paper account (default: ${DEFAULT_BALANCE})`)
    .option('--currency <code>', `currency of a new paper account (default: ${DEFAULT_CURRENCY})`)
    .option('--ticks <file>', 'CSV of time,symbol,bid,ask replayed in real time (default: a random walk)')
    .option('--instruments <file>', 'JSON with instrument overrides and the symbol map')
    .option('--seed <n>', 'random-walk seed, for a reproducible price path')
    .option('--default-volume <lots>', 'lots for a signal without volume (default: the minimum lot)')
    .option('--exchange <id>', 'ccxt: the CCXT exchange id (binance, binanceusdm, bybit, okx…)')
    .option('--market <kind>', 'ccxt: spot or swap (default: swap)')
    .option('--position-mode <mode>', 'ccxt: oneway or hedge, as the exchange account is set (default: oneway)')
    .option('--sandbox', "ccxt: the exchange's test network")
    .option('--dry-run', 'read the account and the markets, log and acknowledge what would be done, send no order')
    .option(
      '--credentials <file>',
      `ccxt: JSON file with apiKey and secret (or ${CREDENTIAL_VARIABLES.apiKey} and ${CREDENTIAL_VARIABLES.secret}); fix: JSON file with username and password (or ${FIX_CREDENTIAL_VARIABLES.username} and ${FIX_CREDENTIAL_VARIABLES.password})`,
    )
    .option('--fix-config <file>', "fix: JSON file naming the broker's FIX sessions, account currency and instruments")
    .option('--proxy-url <url>', "ccxt: send the exchange's requests through this URL prefix (CCXT's proxyUrl)")
    .option(
      '--reconcile-every <seconds>',
      `exchange or broker: compare the book with the venue's positions and open orders this often (default: ${RECONCILE_EVERY_MS / 1000})`,
    )
    .option(
      '--funding-every <seconds>',
      "ccxt swaps: read the account's funding payments for the ledger this often (default: 60)",
    )
    .option(
      '--unprotected <rule>',
      'exchange or broker: what to do with a position whose stop the venue keeps refusing: keep (hold it, say so at error every minute) or close (at the market) (default: keep)',
    )
    .option(
      '--unprotected-after <n>',
      `exchange or broker: refusals of a position's stop before --unprotected applies (default: ${DEFAULT_UNPROTECTED_AFTER})`,
    )
    .option('--transport <kind>', 'auto (WebSocket, falling back to long-poll), websocket or long-poll', 'auto')
    // Commander exits 1 on its own flag errors (unknown option, missing value); the agent
    // promises 2 for every bad flag, so a supervisor can tell them from a failure.
    .exitOverride((err: CommanderError) => process.exit(err.exitCode === 0 ? 0 : 2))
    .action(async (flags: AgentFlags & CcxtFlags & WatchFlags & GroupFlags & { fixConfig?: string }) => {
      const venue = chooseVenue(flags);
      if (!venue.ok) {
        process.stderr.write(`signalgate agent: ${venue.message}\n`);
        process.exitCode = 2;
        return;
      }
      if (flags.tokensFile !== undefined && venue.venue !== 'paper') {
        process.stderr.write(`signalgate agent: ${ONE_PROCESS_PER_ACCOUNT}\n`);
        process.exitCode = 2;
        return;
      }
      if (venue.venue === 'ccxt') {
        await runCcxtAgent(flags);
        return;
      }
      if (venue.venue === 'fix') {
        await runFixAgent(flags);
        return;
      }
      const remote = (['reconcileEvery', 'fundingEvery', 'unprotected', 'unprotectedAfter'] as const).filter(
        (name) => flags[name] !== undefined,
      );
      if (remote.length > 0) {
        process.stderr.write(
          `signalgate agent: ${remote.map((n) => `--${n.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(', ')} only apply to an exchange or a broker; the paper account is its own book\n`,
        );
        process.exitCode = 2;
        return;
      }
      if (flags.tokensFile !== undefined) {
        await runPaperGroup(flags, flags.tokensFile);
        return;
      }
      const read = readPaperSettings(flags, process.env);
      if (!read.ok) {
        process.stderr.write(`signalgate agent: ${read.message}\n`);
        process.exitCode = 2;
        return;
      }
      const log = createLogger(process.env.SIGNALGATE_LOG_LEVEL?.trim() || 'info').child({ component: 'agent' });
      for (const warning of read.settings.warnings) log.warn({}, warning);
      const { PaperVenue } = await import('../../agent/venues/paper/paper-venue.js');
      const paper = new PaperVenue(read.settings, log);
      const { SimulatedAgent } = await import('../../agent/simulated-agent.js');
      const { server, token, transport, dataDir } = read.settings;
      const agent = new SimulatedAgent({ server, token, transport, dataDir, venue: paper, log });
      await runUntilStopped(agent, log, refusal('paper account'));
    });
}

/**
 * `signalgate agent --paper --tokens-file FILE`: one paper agent per token, all in this process,
 * with the same flags; each keeps its account under its own token's folder. The exit codes are
 * the single agent's; a refusal exits 2 only once every agent was refused (see AgentGroup).
 */
async function runPaperGroup(flags: AgentFlags, tokensFile: string): Promise<void> {
  const fail = (message: string) => {
    process.stderr.write(`signalgate agent: ${message}\n`);
    process.exitCode = 2;
  };
  const tokens = readAgentTokensFile(tokensFile, flags, process.env);
  if (!tokens.ok) return fail(tokens.message);
  // Read as the single agent reads them, once: the flags are the same for every agent, and only
  // the token differs (the files named by --ticks and --instruments are not read again per agent).
  const read = readPaperSettings(
    { ...flags, token: undefined, tokenFile: undefined },
    { ...process.env, [AGENT_TOKEN_VARIABLE]: tokens.tokens[0]!.token },
  );
  if (!read.ok) return fail(read.message);
  const { settings } = read;
  const log = createLogger(process.env.SIGNALGATE_LOG_LEVEL?.trim() || 'info').child({ component: 'agent' });
  for (const warning of [...tokens.warnings, ...settings.warnings]) log.warn({}, warning);
  const [{ PaperVenue }, { SimulatedAgent }, { AgentGroup }] = await Promise.all([
    import('../../agent/venues/paper/paper-venue.js'),
    import('../../agent/simulated-agent.js'),
    import('../../agent/agent-group.js'),
  ]);
  log.info({ agents: tokens.tokens.length, tokensFile }, 'running one paper agent per token in this process');
  const { server, transport, dataDir } = settings;
  const refused = refusal('paper account');
  const group = new AgentGroup(
    tokens.tokens.map(({ token, line }) => {
      const memberLog = log.child({ tokensFileLine: line });
      const venue = new PaperVenue(settings, memberLog);
      const agent = new SimulatedAgent({ server, token, transport, dataDir, venue, log: memberLog });
      return { run: () => agent.run(), stop: () => agent.stop(), log: memberLog };
    }),
    refused,
  );
  await runUntilStopped(group, log, refused);
}

/** `--venue NAME`, or `--paper` for `--venue paper`; exactly one venue. */
function chooseVenue(
  flags: AgentFlags,
): { ok: true; venue: 'paper' | 'ccxt' | 'fix' } | { ok: false; message: string } {
  const venue = flags.venue?.trim().toLowerCase();
  if (flags.paper && venue !== undefined && venue !== 'paper') {
    return {
      ok: false,
      message: `--paper is the short form of --venue paper, so it cannot go with --venue ${flags.venue}: give one of them`,
    };
  }
  const chosen = venue ?? (flags.paper ? 'paper' : undefined);
  if (chosen === undefined)
    return {
      ok: false,
      message:
        'choose where to execute: --venue paper (or --paper), --venue ccxt --exchange ID or --venue fix --fix-config FILE',
    };
  if (chosen === 'paper') return { ok: true, venue: 'paper' };
  if (chosen === 'ccxt') return { ok: true, venue: 'ccxt' };
  if (chosen === 'fix') return { ok: true, venue: 'fix' };
  return { ok: false, message: `--venue must be paper, ccxt or fix, got "${flags.venue}"` };
}

/** Why `--tokens-file` is for paper accounts only. */
const ONE_PROCESS_PER_ACCOUNT =
  '--tokens-file runs several paper accounts in one process; an account at an exchange or a broker runs in a process of its own, with its own keys: give its token with --token-file or SIGNALGATE_AGENT_TOKEN';

/** Paper-account flags that mean nothing on an exchange: refused rather than ignored. */
const PAPER_ONLY = ['balance', 'currency', 'ticks', 'seed'] as const;

/** `signalgate agent --venue ccxt`: the same exit codes as the paper agent; 2 also when the exchange refuses the keys. */
async function runCcxtAgent(flags: AgentFlags & CcxtFlags & WatchFlags): Promise<void> {
  const fail = (message: string) => {
    process.stderr.write(`signalgate agent: ${message}\n`);
    process.exitCode = 2;
  };
  const paperOnly = PAPER_ONLY.filter((name) => flags[name] !== undefined);
  if (paperOnly.length > 0)
    return fail(
      `${paperOnly.map((n) => `--${n}`).join(', ')} only apply to the paper account; the exchange has its own balance and prices`,
    );
  const common = readPaperSettings(flags, process.env);
  if (!common.ok) return fail(common.message);
  const read = readCcxtSettings(flags, process.env);
  if (!read.ok) return fail(read.message);
  const watch = readWatchFlags(flags);
  if (!watch.ok) return fail(watch.message);
  const log = createLogger(process.env.SIGNALGATE_LOG_LEVEL?.trim() || 'info').child({ component: 'agent' });
  for (const warning of [...common.settings.warnings, ...read.settings.warnings]) log.warn({}, warning);
  // Loaded only for this venue: CCXT is large, and the server and the paper agent start without it.
  const { CcxtVenue } = await import('../../agent/venues/ccxt/ccxt-venue.js');
  let venue: InstanceType<typeof CcxtVenue>;
  try {
    venue = new CcxtVenue({ ...read.settings, transport: null, log });
  } catch (error) {
    return fail((error as Error).message);
  }
  const { settings } = common;
  log.info(
    {
      venue: venue.name,
      market: read.settings.market,
      positionMode: read.settings.positionMode,
      sandbox: read.settings.sandbox,
      dryRun: read.settings.dryRun,
      keys: read.settings.credentials ? 'given' : 'none',
    },
    'starting',
  );
  await runOnRemoteVenue(venue, settings, read.settings.dryRun, log, 'exchange', watch.value);
}

/** `signalgate agent --venue fix`: the same exit codes as the other venues; 2 also when the broker refuses the logon. */
async function runFixAgent(flags: AgentFlags & CcxtFlags & WatchFlags & { fixConfig?: string }): Promise<void> {
  const fail = (message: string) => {
    process.stderr.write(`signalgate agent: ${message}\n`);
    process.exitCode = 2;
  };
  const paperOnly = PAPER_ONLY.filter((name) => flags[name] !== undefined);
  if (paperOnly.length > 0)
    return fail(
      `${paperOnly.map((n) => `--${n}`).join(', ')} only apply to the paper account; the broker has its own balance and prices`,
    );
  const ccxtOnly = (['exchange', 'market', 'positionMode', 'sandbox', 'proxyUrl', 'fundingEvery'] as const).filter(
    (name) => flags[name] !== undefined,
  );
  if (ccxtOnly.length > 0)
    return fail(
      `${ccxtOnly.map((n) => `--${n.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(', ')} only apply to --venue ccxt`,
    );
  if (flags.dryRun)
    return fail("--dry-run is not available on --venue fix yet: run against the broker's demo server instead");
  const common = readPaperSettings(flags, process.env);
  if (!common.ok) return fail(common.message);
  const read = readFixConfig(flags.fixConfig, flags.credentials, process.env);
  if (!read.ok) return fail(read.message);
  const watch = readWatchFlags(flags);
  if (!watch.ok) return fail(watch.message);
  const log = createLogger(process.env.SIGNALGATE_LOG_LEVEL?.trim() || 'info').child({ component: 'agent' });
  for (const warning of [...common.settings.warnings, ...read.value.warnings]) log.warn({}, warning);
  const { settings } = common;
  // Loaded only for this venue: the FIX engine loads its dictionary, which the others never need.
  const [{ FixVenue }, { createHash }, path] = await Promise.all([
    import('../../agent/venues/fix/fix-venue.js'),
    import('node:crypto'),
    import('node:path'),
  ]);
  // Beside the agent's journal, one folder per token: sequence numbers belong to one agent.
  const storeDir = path.join(
    settings.dataDir,
    'fix',
    createHash('sha256').update(settings.token).digest('hex').slice(0, 16),
  );
  const venue = new FixVenue({ config: read.value.config, credentials: read.value.credentials, storeDir, log });
  const { trade, quote, dialect } = read.value.config;
  log.info(
    {
      venue: venue.name,
      dialect,
      trade: `${trade.host}:${trade.port}`,
      quote: quote ? `${quote.host}:${quote.port}` : null,
      credentials: read.value.credentials ? 'given' : 'none',
    },
    'starting',
  );
  await runOnRemoteVenue(venue, settings, false, log, 'broker', watch.value);
}

/**
 * Runs the agent on an exchange or a broker until SIGTERM or SIGINT and exits: 0 when stopped, 2
 * when the server refuses the token, --server is not a signalgate server the agent can trust or
 * the venue refuses the agent, 1 on any other failure.
 */
async function runOnRemoteVenue(
  venue: Venue,
  settings: PaperSettings,
  dryRun: boolean,
  log: Logger,
  counterparty: 'exchange' | 'broker',
  watch: WatchSettings | null,
): Promise<void> {
  const { RemoteVenueAgent } = await import('../../agent/remote-venue-agent.js');
  const pipSizes: Record<string, number> = {};
  for (const [symbol, override] of Object.entries(settings.instruments.instruments))
    if (override.pipSize !== undefined) pipSizes[symbol.toUpperCase()] = override.pipSize;
  const agent = new RemoteVenueAgent({
    server: settings.server,
    token: settings.token,
    transport: settings.transport,
    dataDir: settings.dataDir,
    venue,
    dryRun,
    symbolMap: settings.instruments.symbolMap,
    pipSizes,
    defaultVolumeLots: settings.defaultVolumeLots,
    manageEveryMs: 2000,
    ...(watch && { reconcileEveryMs: watch.reconcileEveryMs, unprotected: watch.unprotected }),
    ...(watch?.fundingEveryMs !== undefined && { fundingEveryMs: watch.fundingEveryMs }),
    log,
  });
  await runUntilStopped(agent, log, refusal(counterparty));
}

/**
 * The failures the operator must fix before starting again (exit 2): the token refused, --server
 * not a signalgate server the agent can trust, the venue refusing the agent, or the flags
 * contradicting the stored paper account.
 */
function refusal(counterparty: 'exchange' | 'broker' | 'paper account'): (err: unknown) => string | null {
  return (err) =>
    err instanceof AgentUnauthorizedError
      ? 'the server refused the agent token'
      : err instanceof AgentSetupError
        ? 'the agent cannot work with what answers at --server'
        : err instanceof VenueRefusedError
          ? `the ${counterparty} refused the agent`
          : err instanceof StoredAccountConflictError
            ? 'the flags contradict the stored account'
            : null;
}

/**
 * Runs an agent until SIGTERM or SIGINT (exit 0) or until it fails. `refusal` names a failure the
 * operator must fix before starting again (exit 2); any other failure exits 1.
 */
async function runUntilStopped(
  agent: { run(): Promise<void>; stop(): Promise<void> },
  log: Logger,
  refusal: (err: unknown) => string | null,
): Promise<void> {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping');
    void agent.stop();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  try {
    await agent.run();
    log.info('stopped');
    await flushLogger(log);
    process.exit(0);
  } catch (err) {
    const refused = refusal(err);
    log.error({ err: (err as Error).message }, refused ?? 'agent failed');
    await flushLogger(log);
    process.stderr.write(`signalgate agent: ${(err as Error).message}\n`);
    process.exit(refused !== null ? 2 : 1);
  }
}
