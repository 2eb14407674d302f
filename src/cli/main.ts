#!/usr/bin/env node
import { Command } from 'commander';
import { commandModulesFor } from './command-modules.js';

// Everything signalgate writes (the database and its WAL, backups, journals, paper accounts, FIX
// stores) holds keys, secrets or trades: none of it is for other users of the machine.
process.umask(0o077);

const program = new Command('signalgate')
  .description('Inbound trading signal service: authenticate, meter, normalize and deliver trading signals.')
  .showHelpAfterError()
  // The admin commands' one option of the program's: given before or after the subcommand. Here,
  // not with them, so that a run of another command need not load them to accept it.
  .option(
    '--create',
    'admin commands: start a new, empty store when SIGNALGATE_DATA_DIR (or the SIGNALGATE_DATABASE_URL database) holds none',
  );

const modules = commandModulesFor(process.argv.slice(2));
const registers = await Promise.all(modules.map((module) => module.load()));
for (const register of registers) register(program);

await program.parseAsync(process.argv);
