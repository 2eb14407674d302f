import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMAND_MODULES, commandModulesFor } from '../../src/cli/command-modules.js';

/** The top-level commands `modules` register, in order, on a fresh program. */
async function registered(modules: readonly (typeof COMMAND_MODULES)[number][]): Promise<string[]> {
  const program = new Command('signalgate');
  for (const module of modules) (await module.load())(program);
  return program.commands.map((command) => command.name());
}

describe('the CLI loads only the module of the command it runs', () => {
  it('each module registers exactly the commands the table names for it (a new command goes in the table)', async () => {
    for (const module of COMMAND_MODULES) expect(await registered([module])).toEqual(module.names);
  });

  it('all modules together register every command once, in the order help lists them', async () => {
    const names = COMMAND_MODULES.flatMap((module) => module.names);
    expect(await registered(COMMAND_MODULES)).toEqual(names);
    expect(new Set(names).size).toBe(names.length);
  });

  it('a named command loads its module alone; anything else loads all', () => {
    const names = (args: string[]) => commandModulesFor(args).flatMap((module) => module.names);
    expect(names(['accounts', 'list'])).toEqual(['accounts', 'agents', 'sources', 'signals']);
    expect(names(['signals', 'show', 'sig_1'])).toEqual(['accounts', 'agents', 'sources', 'signals']);
    expect(names(['serve'])).toEqual(['serve']);
    expect(names(['agent', '--paper'])).toEqual(['agent']);
    expect(names(['parse', 'EURUSD,buy'])).toEqual(['parse']);
    const all = COMMAND_MODULES.flatMap((module) => module.names);
    for (const args of [[], ['--help'], ['help', 'accounts'], ['--create', 'accounts', 'list'], ['acounts'], ['x']])
      expect(names(args)).toEqual(all);
  });
});
