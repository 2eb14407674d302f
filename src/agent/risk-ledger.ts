import type { Side } from '../engine/index.js';
import { lossBreach, type AccountFacts, type HeldPosition, type RiskViolation } from '../risk/entry-check.js';
import { DEFAULT_DAY_ZONE, localTime, riskDayKey } from '../risk/risk-day.js';
import type { EffectiveRiskRules } from '../risk/risk-rules.js';
import { AgentJournal, type JournalFormat, type JournalRecord } from './agent-journal.js';

/** Entries and starting equities older than this are of no day any zone is still in. */
const KEPT_MS = 3 * 86_400_000;

/** What the agent keeps of its days for the risk rules, in `risk-days.json` beside its journal. */
export interface RiskLedgerFile extends JournalRecord {
  /** Entries sent, by signal, when (epoch ms): counted per day in the rule's zone. */
  entries: { signalId: string; at: number; count: number }[];
  /** `riskDayKey` → the equity the venue reported first that day (the day's starting equity). */
  dayStart: Record<string, number>;
  /** The latest rules each source's signals carried: what the loss watch measures between signals. */
  rules: Record<string, EffectiveRiskRules>;
  /** Halts asked of the server, by rule and day: `reportedAt` null until the server took it. */
  halts: Record<string, { rule: string; reason: string; at: string; reportedAt: string | null }>;
}

const FORMAT: JournalFormat<RiskLedgerFile> = {
  kind: "an agent's risk days",
  remedy:
    'restore it from a backup, or delete it: the entries of the day and its starting equity are then counted from now',
  accepts: (value): value is RiskLedgerFile => {
    const parsed = value as Partial<RiskLedgerFile> | null;
    return parsed?.version === 1 && Array.isArray(parsed.entries) && typeof parsed.dayStart === 'object';
  },
};

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
  /** Entries recorded, and how many of them the last durable write held. */
  private entriesAdded = 0;
  private entriesWritten = 0;
  private counted: Set<string> | null = null;

  private constructor(
    private data: Omit<RiskLedgerFile, keyof JournalRecord>,
    private readonly journal: AgentJournal<RiskLedgerFile>,
  ) {}

  static async open(file: string): Promise<RiskLedger> {
    const stored = await AgentJournal.load(file, FORMAT);
    const data = {
      entries: stored?.entries ?? [],
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
      () => (ledger!.entriesWritten = taken),
    );
    ledger = new RiskLedger(data, journal);
    return ledger;
  }

  /**
   * Resolves once every entry recorded so far is on disk (at once when it is): the agent's
   * journal, which holds the signals' outcomes, waits for it before each write, so a restart may
   * count an entry twice but never misses one.
   */
  entriesDurable(): Promise<void> {
    return this.entriesWritten === this.entriesAdded ? Promise.resolve() : this.journal.save();
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
    if (count === 0 || this.countedSignals().has(signalId)) return;
    // Appended in place (a write serialises the list at once, so none sees it change under it);
    // the old entries leave when the oldest is past what is kept, not at every entry.
    this.data.entries.push({ signalId, at: now, count });
    this.counted?.add(signalId);
    this.entriesAdded += 1;
    if (this.data.entries[0]!.at < now - KEPT_MS) this.prune(now);
  }

  /** The signals the entries were counted for (made at the first use, dropped when old entries go). */
  private countedSignals(): Set<string> {
    this.counted ??= new Set(this.data.entries.map((e) => e.signalId));
    return this.counted;
  }

  /** The facts the check reads, with the positions and funds the caller has from the venue. */
  facts(nets: boolean, positions: readonly HeldPosition[], equity: number, balance: number): AccountFacts {
    return {
      nets,
      positions,
      entries: [
        ...this.data.entries.flatMap((e) => Array<number>(e.count).fill(e.at)),
        ...[...this.sending.values()].flat(),
      ],
      equity,
      balance,
      dayStartEquity: this.data.dayStart,
    };
  }

  /**
   * The loss rule reached at `now`: the account's limit is the loosest a source's rules leave
   * (a source may only tighten), so a halt is asked for only when every source's rules with a
   * loss limit find it reached. Null: none is.
   */
  breach(equity: number, balance: number, now: number): RiskViolation | null {
    const facts = this.facts(false, [], equity, balance);
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
    this.data.entries = this.data.entries.filter((e) => e.at >= now - KEPT_MS);
    this.counted = null;
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
