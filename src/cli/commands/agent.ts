import type { Command } from 'commander';

// PLACEHOLDER until the command is built.
export function registerAgentCommand(_program: Command): void {}
