import { readFileSync } from 'node:fs';
import { lastJournalRecord } from '../../../src/agent/agent-journal.js';

/** What an agent's journal file (paper account, venue journal, risk days) says now: the record a start would read. */
export function readJournal<T = any>(file: string): T {
  return lastJournalRecord(readFileSync(file, 'utf8')) as T;
}
