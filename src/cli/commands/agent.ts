import type { Command, CommanderError } from 'commander';
import { AgentUnauthorizedError } from '../../agent/agent-errors.js';
import { PaperAgent } from '../../agent/venues/paper/paper-agent.js';
import { type AgentFlags, DEFAULT_BALANCE, DEFAULT_CURRENCY, readPaperSettings } from '../../agent/venues/paper/paper-options.js';
import { StoredAccountConflictError } from '../../agent/venues/paper/stored-account-conflict.js';
import { createLogger, flushLogger } from '../../logging/logger.js';

/**
 * `signalgate agent --paper`: the paper-trading agent (CONTRACT §7). Exit codes: 0 after
 * SIGTERM/SIGINT, 1 on a failure (disk), 2 on bad flags (commander's own errors included),
 * flags that contradict the stored account, or a token the server refuses.
 */
export function registerAgentCommand(program: Command): void {
  program
    .command('agent')
    .description('run an executing agent: receives its signals, executes them on a paper account, acknowledges them')
    .requiredOption('--server <url>', 'signalgate base URL, e.g. http://127.0.0.1:8080')
    .option('--token <token>', 'the agent token (or SIGNALGATE_AGENT_TOKEN)')
    .option('--venue <name>', 'where to execute: paper (a simulated account) or ccxt (a crypto exchange)')
    .option('--paper', 'the short form of --venue paper')
    // No commander defaults: whether they were given decides the warning on a restart.
    .option('--balance <amount>', `starting balance of a new paper account (default: ${DEFAULT_BALANCE})`)
    .option('--currency <code>', `currency of a new paper account (default: ${DEFAULT_CURRENCY})`)
    .option('--ticks <file>', 'CSV of time,symbol,bid,ask replayed in real time (default: a random walk)')
    .option('--instruments <file>', 'JSON with instrument overrides and the symbol map')
    .option('--seed <n>', 'random-walk seed, for a reproducible price path')
    .option('--default-volume <lots>', 'lots for a signal without volume (default: the minimum lot)')
    .option('--transport <kind>', 'auto (WebSocket, falling back to long-poll), websocket or long-poll', 'auto')
    // Commander exits 1 on its own flag errors (unknown option, missing value); the agent
    // promises 2 for every bad flag, so a supervisor can tell them from a failure.
    .exitOverride((err: CommanderError) => process.exit(err.exitCode === 0 ? 0 : 2))
    .action(async (flags: AgentFlags) => {
      const venue = chooseVenue(flags);
      if (!venue.ok) {
        process.stderr.write(`signalgate agent: ${venue.message}\n`);
        process.exitCode = 2;
        return;
      }
      const read = readPaperSettings(flags, process.env);
      if (!read.ok) {
        process.stderr.write(`signalgate agent: ${read.message}\n`);
        process.exitCode = 2;
        return;
      }
      const log = createLogger(process.env.SIGNALGATE_LOG_LEVEL?.trim() || 'info').child({ component: 'agent' });
      const agent = new PaperAgent({ ...read.settings, log });
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
        const unauthorized = err instanceof AgentUnauthorizedError;
        const conflict = err instanceof StoredAccountConflictError;
        log.error({ err: (err as Error).message }, unauthorized ? 'the server refused the agent token' : conflict ? 'the flags contradict the stored account' : 'agent failed');
        await flushLogger(log);
        process.stderr.write(`signalgate agent: ${(err as Error).message}\n`);
        process.exit(unauthorized || conflict ? 2 : 1);
      }
    });
}

/** `--venue NAME`, or `--paper` for `--venue paper`; exactly one venue. */
function chooseVenue(flags: AgentFlags): { ok: true; venue: 'paper' } | { ok: false; message: string } {
  const venue = flags.venue?.trim().toLowerCase();
  if (flags.paper && venue !== undefined && venue !== 'paper') {
    return { ok: false, message: `--paper is the short form of --venue paper, so it cannot go with --venue ${flags.venue}: give one of them` };
  }
  const chosen = venue ?? (flags.paper ? 'paper' : undefined);
  if (chosen === undefined) return { ok: false, message: 'choose where to execute: --venue paper (or --paper) or --venue ccxt --exchange ID' };
  if (chosen === 'paper') return { ok: true, venue: 'paper' };
  return { ok: false, message: `--venue must be paper or ccxt, got "${flags.venue}"` };
}
