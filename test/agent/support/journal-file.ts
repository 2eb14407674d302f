import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { lastJournalRecord } from '../../../src/agent/agent-journal.js';

/** What an agent's journal file (paper account, venue journal, risk days) says now: the record a start would read. */
export function readJournal<T = any>(file: string): T {
  return lastJournalRecord(readFileSync(file, 'utf8')) as T;
}

/** The folder an agent keeps `token`'s files in under `dataDir`. */
export function tokenFolder(dataDir: string, token: string): string {
  return path.join(dataDir, 'agents', `agent-${createHash('sha256').update(token).digest('hex').slice(0, 16)}`);
}

/** The comments of the open positions in a token's paper account on disk (none before its first write). */
export function journalComments(dataDir: string, token: string): string[] {
  const file = path.join(tokenFolder(dataDir, token), 'paper-account.json');
  if (!existsSync(file)) return [];
  const book = readJournal(file) as { engine: { positions: Array<{ comment?: string }> } };
  return book.engine.positions.map((p) => p.comment ?? '');
}
