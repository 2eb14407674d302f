import type { Command } from 'commander';

type Register = (program: Command) => void;

export interface CommandModule {
  /** The top-level commands the module registers. */
  names: readonly string[];
  load: () => Promise<Register>;
}

/**
 * The CLI's commands by module, in the order help lists them. A run loads the module of the
 * command it names, not the others: their imports (the language, the engine, the agent, the
 * store, the logger) were about half of an admin command's start-up (decision 0032-faster-start).
 */
export const COMMAND_MODULES: readonly CommandModule[] = [
  { names: ['serve'], load: async () => (await import('./commands/serve.js')).registerServeCommand },
  {
    names: ['accounts', 'agents', 'sources', 'signals'],
    load: async () => (await import('./commands/admin.js')).registerAdminCommands,
  },
  { names: ['channels'], load: async () => (await import('./commands/channels.js')).registerChannelCommands },
  { names: ['risk'], load: async () => (await import('./commands/risk.js')).registerRiskCommands },
  { names: ['ledger'], load: async () => (await import('./commands/ledger.js')).registerLedgerCommands },
  { names: ['admin-token'], load: async () => (await import('./commands/admin-token.js')).registerAdminTokenCommand },
  { names: ['backup'], load: async () => (await import('./commands/backup.js')).registerBackupCommand },
  { names: ['parse'], load: async () => (await import('./commands/parse.js')).registerParseCommand },
  { names: ['simulate'], load: async () => (await import('./commands/simulate.js')).registerSimulateCommand },
  { names: ['agent'], load: async () => (await import('./commands/agent.js')).registerAgentCommand },
];

/**
 * The modules a run with these arguments (process.argv less node and the script) needs: all of
 * them unless the first argument names a command (help, an option first, a mistyped or a newer
 * command all load every module, so help and commander's suggestions see every command).
 */
export function commandModulesFor(args: readonly string[]): readonly CommandModule[] {
  const first = args[0];
  const named = COMMAND_MODULES.find((module) => first !== undefined && module.names.includes(first));
  return named === undefined ? COMMAND_MODULES : [named];
}
