import type { Command } from 'commander';

// PLACEHOLDER until the command is built.
export function registerParseCommand(_program: Command): void {}
