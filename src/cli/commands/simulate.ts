import type { Command } from 'commander';

// PLACEHOLDER until the command is built.
export function registerSimulateCommand(_program: Command): void {}
