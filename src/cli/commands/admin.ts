import type { Command } from 'commander';

// PLACEHOLDER until the command is built.
export function registerAdminCommands(_program: Command): void {}
