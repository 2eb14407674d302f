import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RiskLedger, type RiskLedgerFile } from '../../src/agent/risk-ledger.js';
import { readJournal } from './support/journal-file.js';

/**
 * `risk-days.json`, the agent's count of entries for the daily rules, read back as a restarted
 * agent reads it. It stays small however many signals an account sends: counts by minute, and the
 * ids of the signals whose outcome the journal does not hold yet. The agent's journal does not
 * wait for it: each of its writes carries the entries the file does not hold yet.
 */
const NOW = Date.parse('2026-12-02T12:00:30Z');
const MINUTE = Date.parse('2026-12-02T12:00:00Z');

describe('the risk days file', () => {
  let dir = '';
  const file = () => path.join(dir, 'risk-days.json');
  const stored = () => readJournal(file()) as RiskLedgerFile;
  // The entries the check is given: those of the last 26 hours, where every zone's day begins.
  const recentEntries = (ledger: RiskLedger, now = NOW) =>
    ledger.facts(false, [], 0, 0, now).entries.reduce((n, e) => n + e.count, 0);
  const open = async () => {
    dir ||= mkdtempSync(path.join(tmpdir(), 'risk-days-'));
    return RiskLedger.open(file());
  };
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = '';
  });

  it('ten thousand signals of one minute are one count; their ids go once the journal holds their outcomes', async () => {
    const ledger = await open();
    for (let i = 0; i < 10_000; i += 1) ledger.entered(`sig_${i}`, 1, NOW + i);
    const mark = ledger.mark();
    ledger.entered('sig_late', 2, NOW + 20_000);
    await ledger.save();
    expect(stored().entryMinutes).toEqual([[MINUTE, 10_002]]);
    expect(Object.keys(stored().counting)).toHaveLength(10_001);

    // The agent's journal written from a snapshot taken at `mark`: all but the last are in it.
    ledger.journaled(mark);
    await ledger.save();
    expect(stored().counting).toEqual({ sig_late: NOW + 20_000 });
    expect(recentEntries(ledger)).toBe(10_002);
  });

  it('a signal counted and carried out again after a restart, its outcome not yet journaled, is counted once', async () => {
    const first = await open();
    first.entered('sig_a', 1, NOW);
    first.entered('sig_b', 1, NOW);
    await first.save();
    first.journaled(first.mark() - 1); // sig_a's outcome reached the journal, sig_b's did not
    await first.save();
    expect(Object.keys(stored().counting)).toEqual(['sig_b']);
    await first.close();

    // The agent was killed before its journal held sig_b: it carries sig_b out again.
    const second = await open();
    second.entered('sig_b', 1, NOW + 5_000);
    expect(recentEntries(second)).toBe(2);
    await second.save();
    expect(stored().entryMinutes).toEqual([[MINUTE, 2]]);
    // Let go once this run's journal holds it.
    second.journaled(second.mark());
    await second.save();
    expect(stored().counting).toEqual({});
  });

  describe('the entries the journal carries, and a kill at each point between the two files', () => {
    // One signal's entry, X: the journal written with its outcome (a snapshot taken now, and
    // what it carries), then risk-days.json, then the next journal write, which carries nothing.
    const journalSnapshot = (ledger: RiskLedger) => ({ mark: ledger.mark(), carried: ledger.unwritten() });

    it('carries what the file does not hold yet, and nothing once the file holds it', async () => {
      const ledger = await open();
      expect(ledger.unwritten()).toBeNull();
      ledger.entered('sig_x', 2, NOW);
      ledger.entered('sig_refused', 0, NOW);
      expect(ledger.unwritten()).toEqual({ sig_x: [NOW, 2] });
      await ledger.save();
      expect(ledger.unwritten()).toBeNull();
    });

    it('killed after the journal write, before the file: the start counts the entry the journal carried', async () => {
      const first = await open();
      first.entered('sig_x', 1, NOW);
      const j1 = journalSnapshot(first);
      first.journaled(j1.mark, j1.carried);
      // Killed: risk-days.json was never written.

      const second = await open();
      expect(recentEntries(second)).toBe(0);
      expect(second.carriedOver(j1.carried!, NOW + 1_000)).toBe(true);
      expect(recentEntries(second)).toBe(1);
      await second.save();
      expect(stored().entryMinutes).toEqual([[MINUTE, 1]]);
      // Kept until a journal written without it is durable: a kill before that reads j1 again.
      expect(stored().counting).toEqual({ sig_x: NOW });
      const j2 = journalSnapshot(second);
      expect(j2.carried).toBeNull();
      second.journaled(j2.mark, j2.carried);
      await second.save();
      expect(stored().counting).toEqual({});
    });

    it('killed after the file, before the next journal write: the entry the journal carried is not counted twice', async () => {
      const first = await open();
      first.entered('sig_x', 1, NOW);
      const j1 = journalSnapshot(first);
      first.journaled(j1.mark, j1.carried);
      await first.save();
      // The journal on disk carries sig_x: the file keeps its id, though the journal holds its outcome.
      expect(stored()).toMatchObject({ entryMinutes: [[MINUTE, 1]], counting: { sig_x: NOW } });
      // Killed.

      const second = await open();
      expect(second.carriedOver(j1.carried!, NOW + 1_000)).toBe(false);
      expect(recentEntries(second)).toBe(1);
      const j2 = journalSnapshot(second);
      second.journaled(j2.mark, j2.carried);
      await second.save();
      expect(stored()).toMatchObject({ entryMinutes: [[MINUTE, 1]], counting: {} });
    });

    it('killed after both and the next journal write: counted once, its id gone', async () => {
      const first = await open();
      first.entered('sig_x', 1, NOW);
      const j1 = journalSnapshot(first);
      first.journaled(j1.mark, j1.carried);
      await first.save();
      first.entered('sig_y', 1, NOW + 1_000);
      const j2 = journalSnapshot(first);
      expect(j2.carried).toEqual({ sig_y: [NOW + 1_000, 1] });
      first.journaled(j2.mark, j2.carried);
      await first.save();
      expect(stored().counting).toEqual({ sig_y: NOW + 1_000 });
      // Killed: the journal on disk is j2.

      const second = await open();
      expect(second.carriedOver(j2.carried!, NOW + 2_000)).toBe(false);
      expect(recentEntries(second)).toBe(2);
    });

    it('a journal write that carried an entry does not let its id go, even once it holds the outcome', async () => {
      const ledger = await open();
      ledger.entered('sig_x', 1, NOW);
      const j1 = journalSnapshot(ledger);
      const saved = ledger.save();
      // The file's write under way when the journal's is durable: the journal carried sig_x.
      ledger.journaled(j1.mark, j1.carried);
      await saved;
      await ledger.save();
      expect(stored().counting).toEqual({ sig_x: NOW });
    });
  });

  it("an earlier version's file, an entry per signal, is read as counts by minute", async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'risk-days-'));
    writeFileSync(
      file(),
      JSON.stringify({
        version: 1,
        entries: [
          { signalId: 'sig_1', at: NOW - 86_400_000, count: 1 },
          { signalId: 'sig_2', at: NOW - 60_000, count: 1 },
          { signalId: 'sig_3', at: NOW, count: 2 },
        ],
        dayStart: {},
        rules: {},
        halts: {},
        savedAt: new Date(NOW).toISOString(),
      }),
    );
    const ledger = await RiskLedger.open(file());
    expect(recentEntries(ledger)).toBe(4);
    ledger.entered('sig_4', 1, NOW + 1_000);
    await ledger.save();
    expect(stored().entryMinutes).toEqual([
      [Date.parse('2026-12-01T12:00:00Z'), 1],
      [Date.parse('2026-12-02T11:59:00Z'), 1],
      [MINUTE, 3],
    ]);
    expect(stored()).not.toHaveProperty('entries');
  });

  it('counts and ids older than three days leave the file', async () => {
    const ledger = await open();
    ledger.entered('sig_old', 1, NOW - 3 * 86_400_000 - 60_000);
    ledger.entered('sig_new', 1, NOW);
    await ledger.save();
    expect(stored().entryMinutes).toEqual([[MINUTE, 1]]);
    expect(Object.keys(stored().counting)).toEqual(['sig_new']);
  });
});
