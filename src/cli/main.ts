#!/usr/bin/env node
import { Command } from 'commander';
import { registerAdminCommands } from './commands/admin.js';
import { registerChannelCommands } from './commands/channels.js';
import { registerAdminTokenCommand } from './commands/admin-token.js';
import { registerAgentCommand } from './commands/agent.js';
import { registerBackupCommand } from './commands/backup.js';
import { registerParseCommand } from './commands/parse.js';
import { registerServeCommand } from './commands/serve.js';
import { registerSimulateCommand } from './commands/simulate.js';

// Everything signalgate writes (the database and its WAL, backups, journals, paper accounts, FIX
// stores) holds keys, secrets or trades: none of it is for other users of the machine.
process.umask(0o077);

const program = new Command('signalgate')
  .description('Inbound trading signal service: authenticate, meter, normalize and deliver trading signals.')
  .showHelpAfterError();

registerServeCommand(program);
registerAdminCommands(program);
registerChannelCommands(program);
registerAdminTokenCommand(program);
registerBackupCommand(program);
registerParseCommand(program);
registerSimulateCommand(program);
registerAgentCommand(program);

await program.parseAsync(process.argv);
