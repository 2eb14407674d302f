import type { Command } from 'commander';

// PLACEHOLDER until the command is built.
export function registerServeCommand(_program: Command): void {}
