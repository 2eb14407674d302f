#!/usr/bin/env node
import { Command } from 'commander';
import { registerAdminCommands } from './commands/admin.js';
import { registerAdminTokenCommand } from './commands/admin-token.js';
import { registerAgentCommand } from './commands/agent.js';
import { registerBackupCommand } from './commands/backup.js';
import { registerParseCommand } from './commands/parse.js';
import { registerServeCommand } from './commands/serve.js';
import { registerSimulateCommand } from './commands/simulate.js';

const program = new Command('signalgate')
  .description('Inbound trading signal service: authenticate, meter, normalize and deliver trading signals.')
  .showHelpAfterError();

registerServeCommand(program);
registerAdminCommands(program);
registerAdminTokenCommand(program);
registerBackupCommand(program);
registerParseCommand(program);
registerSimulateCommand(program);
registerAgentCommand(program);

await program.parseAsync(process.argv);
