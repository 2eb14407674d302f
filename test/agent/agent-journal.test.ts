import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  AgentJournal,
  JournalJson,
  lastJournalRecord,
  type JournalFormat,
  type JournalRecord,
} from '../../src/agent/agent-journal.js';
import { executedJson, type ExecutedSignal } from '../../src/agent/executed-signal.js';

interface Counter extends JournalRecord {
  n: number;
}

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** `venue.json` in a fresh folder of its own, removed after the test. */
function journalFile(): string {
  dir = mkdtempSync(path.join(tmpdir(), 'signalgate-journal-'));
  return path.join(dir, 'venue.json');
}

/** What a start would read from the file. */
const stored = (file: string): Record<string, unknown> =>
  lastJournalRecord(readFileSync(file, 'utf8')) as Record<string, unknown>;

const COUNTER: JournalFormat<Counter> = {
  kind: 'a counter',
  remedy: 'remove it',
  accepts: (value): value is Counter => typeof (value as Counter).n === 'number',
};

/**
 * Every agent state file (the venue journal with the executed signals and the in-flight ones,
 * the paper account) is written by AgentJournal: at a run's first write a temporary file beside
 * it, synced, renamed over it, the directory synced; after that each write a line added and synced.
 */
describe('an agent journal write', () => {
  it('replaces the file at its first write, readable by the owner alone, leaving nothing beside it', async () => {
    const file = journalFile();
    let n = 1;
    const journal = new AgentJournal<Counter>(file, () => ({ n }));
    await journal.save();
    n = 2;
    await journal.save();
    expect(stored(file)).toMatchObject({ version: 1, n: 2 });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['venue.json']);
  });

  it('that fails leaves no temporary file behind, and the next write succeeds', async () => {
    const file = journalFile();
    const journal = new AgentJournal<Counter>(file, () => ({ n: 1 }));
    // The rename is refused: a directory, not empty, stands where the file goes.
    mkdirSync(file);
    writeFileSync(path.join(file, 'in-the-way'), '');
    await expect(journal.save()).rejects.toThrow();
    expect(readdirSync(dir)).toEqual(['venue.json']);
    rmSync(file, { recursive: true });
    await journal.save();
    expect(readdirSync(dir)).toEqual(['venue.json']);
    expect(stored(file)).toMatchObject({ n: 1 });
  });

  it('takes a field given as ready JSON as it is, and the executed signals as they stand at each write', async () => {
    const file = journalFile();
    const entry: ExecutedSignal = {
      id: 'sig_1',
      seq: 1,
      executedAt: '2026-01-01T00:00:00.000Z',
      outcome: { status: 'executed', message: 'opened "1"', result: { events: [{ type: 'opened' }] } },
      acked: false,
    };
    const journal = new AgentJournal<JournalRecord & { n: number; raw: unknown; executed: ExecutedSignal[] }>(
      file,
      () => ({
        n: 1,
        raw: new JournalJson([Buffer.from('{"a":'), Buffer.from('[1,2]}')]),
        executed: executedJson([entry]),
      }),
    );
    await journal.save();
    const first = stored(file);
    expect(first).toEqual({ version: 1, n: 1, raw: { a: [1, 2] }, executed: [entry], savedAt: first.savedAt });
    // The one change an entry sees after it is recorded: written as it is now, not as first
    // serialised; settled, without the result and timings the server holds.
    entry.acked = true;
    entry.outcome.timings = { decidedAt: '2026-01-01T00:00:00.001Z', sentAt: null, venueAckedAt: null, filledAt: null };
    await journal.save();
    expect(stored(file).executed).toEqual([
      { ...entry, outcome: { status: 'executed', message: 'opened "1"', result: null }, acked: true },
    ]);
  });

  it('writes what it took only once what must be on disk first is, and a failure there writes nothing', async () => {
    const file = journalFile();
    let n = 1;
    let release: (failure?: Error) => void = () => undefined;
    const journal = new AgentJournal<Counter>(
      file,
      () => ({ n }),
      () => undefined,
      () => new Promise<void>((resolve, reject) => (release = (failure) => (failure ? reject(failure) : resolve()))),
    );
    const saved = journal.save();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(readdirSync(dir)).toEqual([]);
    // Changed after the snapshot: the next write's.
    n = 2;
    release();
    await saved;
    expect(stored(file)).toMatchObject({ n: 1 });
    const failing = journal.save();
    await new Promise((resolve) => setTimeout(resolve, 20));
    release(new Error('the risk days could not be written'));
    await expect(failing).rejects.toThrow('the risk days could not be written');
    expect(stored(file)).toMatchObject({ n: 1 });
  });
});

describe('a journal over a run', () => {
  it('adds each write as a line to the same file, and a start reads the last', async () => {
    const file = journalFile();
    let n = 1;
    const journal = new AgentJournal<Counter>(file, () => ({ n }));
    await journal.save();
    const inode = statSync(file).ino;
    for (n = 2; n <= 4; n++) await journal.save();
    await journal.close();
    expect(statSync(file).ino).toBe(inode);
    expect(
      readFileSync(file, 'utf8')
        .split('\n')
        .map((line) => (line === '' ? null : JSON.parse(line).n)),
    ).toEqual([1, 2, 3, 4, null]);
    expect(await AgentJournal.load(file, COUNTER)).toMatchObject({ version: 1, n: 4 });
  });

  it('read after a crash in the middle of a write gives the write before, and the next run starts the file again', async () => {
    const file = journalFile();
    let n = 1;
    const journal = new AgentJournal<Counter>(file, () => ({ n }));
    await journal.save();
    n = 2;
    await journal.save();
    await journal.close();
    // The third record cut short, as a crash before its sync can leave it.
    const third = `{"version":1,"n":3,"savedAt":"2026-01-01T00:00:00.000Z"}\n`;
    writeFileSync(file, readFileSync(file, 'utf8') + third.slice(0, 20), { mode: 0o600 });
    expect(await AgentJournal.load(file, COUNTER)).toMatchObject({ n: 2 });
    n = 5;
    const next = new AgentJournal<Counter>(file, () => ({ n }));
    await next.save();
    await next.close();
    expect(readFileSync(file, 'utf8').trimEnd().split('\n')).toHaveLength(1);
    expect(await AgentJournal.load(file, COUNTER)).toMatchObject({ n: 5 });
  });

  it('reads a file written whole, as one JSON object, and a file with no whole record is damaged', async () => {
    const file = journalFile();
    writeFileSync(file, '{"version":1,"n":7,"savedAt":"2026-01-01T00:00:00.000Z"}');
    expect(await AgentJournal.load(file, COUNTER)).toMatchObject({ n: 7 });
    writeFileSync(file, '{"version":1,"n":7,"sa');
    await expect(AgentJournal.load(file, COUNTER)).rejects.toThrow(/venue\.json is damaged .*; remove it/);
  });

  it('grown past its bound, is replaced by a file holding the last write alone', async () => {
    const file = journalFile();
    let n = 0;
    const filler = 'x'.repeat(512 * 1024);
    const journal = new AgentJournal<Counter & { filler: string }>(file, () => ({ n, filler }));
    const lines = () => readFileSync(file, 'utf8').trimEnd().split('\n').length;
    let most = 0;
    for (n = 1; n <= 10; n++) {
      await journal.save();
      most = Math.max(most, lines());
    }
    await journal.close();
    // 4 MiB hold seven such records, not eight.
    expect(most).toBe(7);
    expect(lines()).toBe(3);
    expect(stored(file)).toMatchObject({ n: 10 });
  });
});

describe('a journal that writes two at once', () => {
  it('begins a save asked during a write before that write ends, adds its record after it, and says each is written in order', async () => {
    const file = journalFile();
    let n = 1;
    const taken: number[] = [];
    const written: number[] = [];
    let release: () => void = () => undefined;
    // The first write is held before its file is written; the second is not.
    let firsts = 0;
    const journal = new AgentJournal<Counter>(
      file,
      () => {
        taken.push(n);
        return { n };
      },
      (snapshot) => written.push(snapshot.n as number),
      () => (firsts++ === 0 ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve()),
      2,
    );
    const one = journal.save();
    await new Promise((resolve) => setTimeout(resolve, 20));
    n = 2;
    const two = journal.save();
    let twoDone = false;
    void two.then(() => (twoDone = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The second write took its snapshot while the first is held; it waits to add its record
    // until the first has, so the older snapshot never comes after the newer one.
    expect(taken).toEqual([1, 2]);
    expect(twoDone).toBe(false);
    expect(readdirSync(dir).filter((name) => name === 'venue.json')).toEqual([]);
    release();
    await Promise.all([one, two]);
    expect(written).toEqual([1, 2]);
    expect(stored(file)).toMatchObject({ n: 2 });
    expect(readdirSync(dir)).toEqual(['venue.json']);
  });
});
