import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentJournal, type JournalRecord } from '../../src/agent/agent-journal.js';

interface Counter extends JournalRecord {
  n: number;
}

/**
 * Every agent state file (the venue journal with the executed signals and the in-flight ones,
 * the paper account) is written by AgentJournal: a temporary file beside it, synced, renamed over
 * it, the directory synced.
 */
describe('an agent journal write', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('replaces the file whole, readable by the owner alone, leaving nothing beside it', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'signalgate-journal-'));
    const file = path.join(dir, 'venue.json');
    let n = 1;
    const journal = new AgentJournal<Counter>(file, () => ({ n }));
    await journal.save();
    n = 2;
    await journal.save();
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ version: 1, n: 2 });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['venue.json']);
  });

  it('that fails leaves no temporary file behind, and the next write succeeds', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'signalgate-journal-'));
    const file = path.join(dir, 'venue.json');
    const journal = new AgentJournal<Counter>(file, () => ({ n: 1 }));
    // The rename is refused: a directory, not empty, stands where the file goes.
    mkdirSync(file);
    writeFileSync(path.join(file, 'in-the-way'), '');
    await expect(journal.save()).rejects.toThrow();
    expect(readdirSync(dir)).toEqual(['venue.json']);
    rmSync(file, { recursive: true });
    await journal.save();
    expect(readdirSync(dir)).toEqual(['venue.json']);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ n: 1 });
  });
});
