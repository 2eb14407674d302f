import type { Side } from '../engine/index.js';
import { lossBreach, type AccountFacts, type HeldPosition, type RiskViolation } from '../risk/entry-check.js';
import { DEFAULT_DAY_ZONE, localTime, riskDayKey } from '../risk/risk-day.js';
import type { EffectiveRiskRules } from '../risk/risk-rules.js';
import { AgentJournal, type JournalFormat, type JournalRecord } from './agent-journal.js';

/** Entries and starting equities older than this are of no day any zone is still in. */
const KEPT_MS = 3 * 86_400_000;
const MINUTE_MS = 60_000;
/** A zone's day began at most 26 hours ago (24, one more the day clocks go back, and a margin). */
const TODAY_AT_MOST_MS = 26 * 3_600_000;

/** What the agent keeps of its days for the risk rules, in `risk-days.json` beside its journal. */
export interface RiskLedgerFile extends JournalRecord {
  /**
   * Entries sent, as [the minute they left (epoch ms), how many], oldest first: counted per day
   * in the rule's zone (every zone's day begins on a whole minute).
   */
  entryMinutes: [number, number][];
  /**
   * Signals whose entries are counted and whose outcome the agent's journal did not hold yet,
   * with when they were counted: one carried out again after a restart is not counted twice.
   */
  counting: Record<string, number>;
  /** `riskDayKey` → the equity the venue reported first that day (the day's starting equity). */
  dayStart: Record<string, number>;
  /** The latest rules each source's signals carried: what the loss watch measures between signals. */
  rules: Record<string, EffectiveRiskRules>;
  /** Halts asked of the server, by rule and day: `reportedAt` null until the server took it. */
  halts: Record<string, { rule: string; reason: string; at: string; reportedAt: string | null }>;
}

/**
 * Entries counted and not yet in a durable write of `risk-days.json`, by signal: [when (epoch ms),
 * how many]. Each write of the agent's journal carries them (`riskEntries`), so the journal that
 * holds a signal's outcome holds its entries too, whichever of the two files a kill leaves behind.
 */
export type CarriedEntries = Record<string, [number, number]>;

/** The file an earlier version wrote: an entry per signal, kept three days. */
interface EarlierEntries {
  entries?: { signalId: string; at: number; count: number }[];
}

const FORMAT: JournalFormat<RiskLedgerFile> = {
  kind: "an agent's risk days",
  remedy:
    'restore it from a backup, or delete it: the entries of the day and its starting equity are then counted from now',
  accepts: (value): value is RiskLedgerFile => {
    const parsed = value as (Partial<RiskLedgerFile> & EarlierEntries) | null;
    return (
      parsed?.version === 1 &&
      (Array.isArray(parsed.entryMinutes) || Array.isArray(parsed.entries)) &&
      typeof parsed.dayStart === 'object'
    );
  },
};

/** An earlier version's entries, counted by minute (the signals' ids are its journal's business no more). */
function minutesOf(entries: readonly { at: number; count: number }[]): [number, number][] {
  const minutes = new Map<number, number>();
  for (const e of entries) {
    const minute = Math.floor(e.at / MINUTE_MS) * MINUTE_MS;
    minutes.set(minute, (minutes.get(minute) ?? 0) + e.count);
  }
  return [...minutes].sort((a, b) => a[0] - b[0]);
}

/**
 * The figures the risk rules need beyond what the venue says now, kept across restarts: the
 * entries of each day and each day's starting equity (keyed by the day in the rule's zone), the
 * rules last seen, and the halts asked for. The day's starting equity is the first equity the
 * agent read that day (it reads it every few seconds), so a day that begins while the agent is
 * stopped starts at its first read after the start.
 */
export class RiskLedger {
  /**
   * Entries that passed the check and whose signal has no outcome yet, by signal (epoch ms each):
   * counted too, so signals of other symbols carried out meanwhile see them.
   */
  private readonly sending = new Map<string, number[]>();
  /** Entries recorded (a count that numbers them). */
  private entriesAdded = 0;
  /**
   * The signals of `counting` by the entry count (`entriesAdded`) they were recorded at: the
   * agent's journal written from a snapshot taken at or after it holds their outcome. -1: counted
   * by the last run, kept until the signal is carried out again or its day is past.
   */
  private readonly countedAt = new Map<string, number>();
  /** Entries not yet in a durable write of this file, with the count they were recorded at. */
  private readonly notWritten = new Map<string, { at: number; count: number; added: number }>();

  private constructor(
    private data: Omit<RiskLedgerFile, keyof JournalRecord>,
    private readonly journal: AgentJournal<RiskLedgerFile>,
  ) {
    for (const id of Object.keys(data.counting)) this.countedAt.set(id, -1);
  }

  static async open(file: string): Promise<RiskLedger> {
    const stored = (await AgentJournal.load(file, FORMAT)) as (RiskLedgerFile & EarlierEntries) | null;
    const data = {
      entryMinutes: stored?.entryMinutes ?? minutesOf(stored?.entries ?? []),
      counting: stored?.counting ?? {},
      dayStart: stored?.dayStart ?? {},
      rules: stored?.rules ?? {},
      halts: stored?.halts ?? {},
    };
    let ledger: RiskLedger | null = null;
    let taken = 0;
    const journal = new AgentJournal<RiskLedgerFile>(
      file,
      () => {
        taken = ledger!.entriesAdded;
        return ledger!.data;
      },
      () => {
        for (const [id, entry] of ledger!.notWritten) if (entry.added <= taken) ledger!.notWritten.delete(id);
      },
    );
    ledger = new RiskLedger(data, journal);
    return ledger;
  }

  /** Where the counting stands, taken with a snapshot of the agent's journal (see `journaled`). */
  mark(): number {
    return this.entriesAdded;
  }

  /**
   * The entries the agent's journal carries in a snapshot taken now: those this file does not
   * hold durably yet (null: none). The journal's write need not wait for this file's.
   */
  unwritten(): CarriedEntries | null {
    if (this.notWritten.size === 0) return null;
    const carried: CarriedEntries = {};
    for (const [id, { at, count }] of this.notWritten) carried[id] = [at, count];
    return carried;
  }

  /**
   * The agent's journal written from a snapshot taken at `mark`, carrying `carried`: it holds the
   * outcomes of the signals counted until then, which are never carried out again, so their ids
   * are let go, except those it carried: were this file written without them, a restart reading
   * that journal would count them again.
   */
  journaled(mark: number, carried: CarriedEntries | null = null): void {
    let dropped = false;
    for (const [id, at] of this.countedAt) {
      if (at < 0 || at > mark || (carried !== null && id in carried)) continue;
      this.countedAt.delete(id);
      dropped = true;
    }
    if (!dropped) return;
    this.data.counting = Object.fromEntries(
      Object.entries(this.data.counting).filter(([id]) => this.countedAt.has(id)),
    );
  }

  /**
   * At a start, the entries the agent's journal carried (written with their outcomes before this
   * file held them): each not in `counting` is counted now, and each goes from `counting` once a
   * journal written without it is durable. Save the file after. True when one was counted.
   */
  carriedOver(entries: CarriedEntries, now: number): boolean {
    let counted = false;
    for (const [id, [at, count]] of Object.entries(entries)) {
      if (this.countedAt.has(id)) {
        this.countedAt.set(id, this.entriesAdded);
        continue;
      }
      if (at < now - KEPT_MS) continue;
      this.count(id, at, count);
      counted = true;
    }
    return counted;
  }

  save(): Promise<void> {
    return this.journal.save();
  }

  close(): Promise<void> {
    return this.journal.close();
  }

  /** The zones days are counted in: UTC and every zone a rule named. */
  private zones(): string[] {
    const zones = new Set([DEFAULT_DAY_ZONE]);
    for (const rules of Object.values(this.data.rules)) if (rules.dayTimeZone) zones.add(rules.dayTimeZone);
    return [...zones];
  }

  /** The rules a source's signal carried; true when they changed. */
  seen(sourceId: string, rules: EffectiveRiskRules): boolean {
    if (JSON.stringify(this.data.rules[sourceId]) === JSON.stringify(rules)) return false;
    this.data.rules = { ...this.data.rules, [sourceId]: rules };
    return true;
  }

  /**
   * A source's signal came without rules: neither its account nor it has any now, so the loss
   * watch must not go on measuring the ones it carried before. True when some were forgotten.
   */
  forget(sourceId: string): boolean {
    if (!(sourceId in this.data.rules)) return false;
    const { [sourceId]: _gone, ...rest } = this.data.rules;
    this.data.rules = rest;
    return true;
  }

  /** An equity the venue reported at `now`: the start of each zone's day that has none yet. True when one was recorded. */
  observe(equity: number, now: number): boolean {
    let changed = false;
    for (const zone of this.zones()) {
      let key: string;
      try {
        key = riskDayKey(now, zone);
      } catch {
        continue; // an unknown zone: the check refuses naming it
      }
      if (this.data.dayStart[key] !== undefined) continue;
      this.data.dayStart = { ...this.data.dayStart, [key]: equity };
      changed = true;
    }
    if (changed) this.prune(now);
    return changed;
  }

  /** An entry of the signal passed the check and leaves now. */
  sendingEntry(signalId: string, now: number): void {
    this.sending.set(signalId, [...(this.sending.get(signalId) ?? []), now]);
  }

  /** The entries a signal sent, once it has its outcome (counted once per signal, however often it was carried out). */
  entered(signalId: string, count: number, now: number): void {
    this.sending.delete(signalId);
    if (count === 0) return;
    if (this.countedAt.has(signalId)) {
      // Counted by the last run, carried out again: let go once the journal holds this outcome.
      this.entriesAdded += 1;
      this.countedAt.set(signalId, this.entriesAdded);
      return;
    }
    this.count(signalId, now, count);
  }

  /** Counts a signal's entries at `now`, its id kept in `counting` and carried by the journal until this file holds it. */
  private count(signalId: string, now: number, count: number): void {
    this.entriesAdded += 1;
    this.countedAt.set(signalId, this.entriesAdded);
    this.notWritten.set(signalId, { at: now, count, added: this.entriesAdded });
    // Changed in place: a write serialises the file at once, so none sees it change under it.
    this.data.counting[signalId] = now;
    const minute = Math.floor(now / MINUTE_MS) * MINUTE_MS;
    const minutes = this.data.entryMinutes;
    const last = minutes.at(-1);
    if (last !== undefined && last[0] === minute) last[1] += count;
    else if (last === undefined || last[0] < minute) minutes.push([minute, count]);
    // The clock went back: the minute goes in its place.
    else this.data.entryMinutes = minutesOf([...minutes.map(([at, n]) => ({ at, count: n })), { at: now, count }]);
    if (this.data.entryMinutes[0]![0] < now - KEPT_MS) this.prune(now);
  }

  /** The facts the check reads, with the positions and funds the caller has from the venue. */
  facts(nets: boolean, positions: readonly HeldPosition[], equity: number, balance: number, now: number): AccountFacts {
    const today = now - TODAY_AT_MOST_MS;
    const entries: { at: number; count: number }[] = [];
    for (let i = this.data.entryMinutes.length - 1; i >= 0; i -= 1) {
      const [at, count] = this.data.entryMinutes[i]!;
      if (at < today) break;
      entries.push({ at, count });
    }
    for (const sent of this.sending.values()) for (const at of sent) entries.push({ at, count: 1 });
    return { nets, positions, entries, equity, balance, dayStartEquity: this.data.dayStart };
  }

  /**
   * The loss rule reached at `now`: the account's limit is the loosest a source's rules leave
   * (a source may only tighten), so a halt is asked for only when every source's rules with a
   * loss limit find it reached. Null: none is.
   */
  breach(equity: number, balance: number, now: number): RiskViolation | null {
    const facts = this.facts(false, [], equity, balance, now);
    let found: RiskViolation | null = null;
    for (const rules of Object.values(this.data.rules)) {
      if (!rules.maxDailyLoss && !rules.maxTotalLoss) continue;
      let breach: RiskViolation | null;
      try {
        breach = lossBreach(rules, facts, now);
      } catch {
        continue;
      }
      if (breach === null) return null;
      found = breach;
    }
    return found;
  }

  /** The key a halt is asked for once under: the rule and its day. */
  haltKey(violation: RiskViolation, now: number): string {
    const zone =
      Object.values(this.data.rules).find((r) => r.maxDailyLoss || r.maxTotalLoss)?.dayTimeZone ?? DEFAULT_DAY_ZONE;
    let day: string;
    try {
      day = riskDayKey(now, zone);
    } catch {
      day = riskDayKey(now, DEFAULT_DAY_ZONE);
    }
    return `${violation.rule} ${day}`;
  }

  halt(key: string): RiskLedgerFile['halts'][string] | undefined {
    return this.data.halts[key];
  }

  recordHalt(key: string, violation: RiskViolation, now: number): void {
    this.data.halts = {
      ...this.data.halts,
      [key]: { rule: violation.rule, reason: violation.message, at: new Date(now).toISOString(), reportedAt: null },
    };
  }

  reported(key: string, now: number): void {
    const halt = this.data.halts[key];
    if (halt) this.data.halts = { ...this.data.halts, [key]: { ...halt, reportedAt: new Date(now).toISOString() } };
  }

  /** Halts not yet taken by the server. */
  unreported(): [string, RiskLedgerFile['halts'][string]][] {
    return Object.entries(this.data.halts).filter(([, halt]) => halt.reportedAt === null);
  }

  private prune(now: number): void {
    const oldest = localTime(now - KEPT_MS, DEFAULT_DAY_ZONE).date;
    this.data.entryMinutes = this.data.entryMinutes.filter(([at]) => at >= now - KEPT_MS);
    for (const [id, at] of Object.entries(this.data.counting))
      if (at < now - KEPT_MS) {
        this.countedAt.delete(id);
        this.notWritten.delete(id);
      }
    this.data.counting = Object.fromEntries(
      Object.entries(this.data.counting).filter(([id]) => this.countedAt.has(id)),
    );
    this.data.dayStart = Object.fromEntries(
      Object.entries(this.data.dayStart).filter(([key]) => key.slice(key.lastIndexOf(' ') + 1) >= oldest),
    );
    this.data.halts = Object.fromEntries(
      Object.entries(this.data.halts).filter(([key]) => key.slice(key.lastIndexOf(' ') + 1) >= oldest),
    );
  }
}

/** The venue's own positions the book does not manage, as the risk check counts them. */
export function heldOf(positions: readonly { symbol: string; side: Side; volume: number }[]): HeldPosition[] {
  return positions.map((p) => ({ symbol: p.symbol, side: p.side, lots: p.volume }));
}
