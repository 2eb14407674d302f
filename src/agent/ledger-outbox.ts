import {
  MAX_REPORT_ENTRIES,
  type LedgerBust,
  type LedgerFill,
  type LedgerFunding,
  type LedgerReport,
} from '../protocol/ledger-report.js';

/** What the journal keeps of the ledger: what was not yet confirmed by the server. */
export interface LedgerOutboxRecord {
  fills: LedgerFill[];
  funding: LedgerFunding[];
  /** Fills the venue took back (absent: a journal from before them). */
  busts?: LedgerBust[];
  /** Where the next read of the venue's funding payments starts (absent: a journal from before them). */
  fundingFrom?: FundingCursor;
}

/**
 * The time of the latest funding payment taken (epoch ms; the first start's time before any) and
 * the ids of those booked at exactly that time: the venue is asked from that time on (inclusive),
 * and what it answers again is known by its id.
 */
export interface FundingCursor {
  at: number;
  ids: string[];
}

/**
 * The fills, funding payments and busts the agent has not yet seen the server record. Written in the
 * journal with the book step they came from (one file, one write), so a restart finds a fill
 * exactly when it finds its effect on the book, and sends again what it did not see confirmed: the
 * server records each venue id once, so sending twice never counts twice.
 */
export class LedgerOutbox {
  private fills: LedgerFill[];
  private funding: LedgerFunding[];
  private busts: LedgerBust[];
  /** Ids on disk: only those are sent. */
  private readonly durable = new Set<string>();
  private fundingCursor: FundingCursor;

  /** `now`: where funding is read from when the journal says nothing yet (its first start). */
  constructor(stored: LedgerOutboxRecord | undefined, now = Date.now()) {
    this.fills = [...(stored?.fills ?? [])];
    this.funding = [...(stored?.funding ?? [])];
    this.busts = [...(stored?.busts ?? [])];
    this.fundingCursor = stored?.fundingFrom ?? { at: now, ids: [] };
    if (stored) this.written(stored);
  }

  add(fills: readonly LedgerFill[], funding: readonly LedgerFunding[] = [], busts: readonly LedgerBust[] = []): void {
    this.fills.push(...fills);
    this.funding.push(...funding);
    // A later bust of the same fill counts its lots in all: it takes the earlier one's place.
    for (const bust of busts) this.busts = [...this.busts.filter((b) => b.venueFillId !== bust.venueFillId), bust];
  }

  /** Where the next read of the venue's funding payments starts (epoch ms, inclusive). */
  get fundingFrom(): number {
    return this.fundingCursor.at;
  }

  /**
   * The venue's funding payments from `fundingFrom` on: those not taken before join the outbox and
   * move the cursor, both in the next journal write, so a restart before it reads them again and
   * one after it knows them. Answers how many were new.
   */
  takeFunding(payments: readonly LedgerFunding[]): number {
    const sorted = [...payments].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
    let cursor = this.fundingCursor;
    let taken = 0;
    for (const payment of sorted) {
      const at = Date.parse(payment.at);
      if (at < cursor.at || (at === cursor.at && cursor.ids.includes(payment.venueFundingId))) continue;
      cursor =
        at > cursor.at ? { at, ids: [payment.venueFundingId] } : { at, ids: [...cursor.ids, payment.venueFundingId] };
      this.funding.push(payment);
      taken += 1;
    }
    this.fundingCursor = cursor;
    return taken;
  }

  get size(): number {
    return this.fills.length + this.funding.length + this.busts.length;
  }

  /**
   * The oldest entries on disk, as many as one report holds: one the server recorded must survive
   * a crash on the agent's side too, or a restart would carry the step out again as another fill.
   */
  next(): LedgerReport {
    const fills = this.fills.filter((f) => this.durable.has(`f:${f.venueFillId}`)).slice(0, MAX_REPORT_ENTRIES);
    const funding = this.funding
      .filter((f) => this.durable.has(`p:${f.venueFundingId}`))
      .slice(0, MAX_REPORT_ENTRIES - fills.length);
    const busts = this.busts
      .filter((b) => this.durable.has(`b:${b.venueFillId}@${b.lots}`))
      .slice(0, MAX_REPORT_ENTRIES - fills.length - funding.length);
    return busts.length > 0 ? { fills, funding, busts } : { fills, funding };
  }

  /** The server recorded this report (or knew its entries): they leave the outbox. */
  confirmed(report: LedgerReport): void {
    const fills = new Set(report.fills.map((f) => f.venueFillId));
    const funding = new Set((report.funding ?? []).map((f) => f.venueFundingId));
    this.fills = this.fills.filter((f) => !fills.has(f.venueFillId));
    const busts = new Set((report.busts ?? []).map((b) => `b:${b.venueFillId}@${b.lots}`));
    this.funding = this.funding.filter((f) => !funding.has(f.venueFundingId));
    this.busts = this.busts.filter((b) => !busts.has(`b:${b.venueFillId}@${b.lots}`));
    for (const id of fills) this.durable.delete(`f:${id}`);
    for (const id of funding) this.durable.delete(`p:${id}`);
    for (const id of busts) this.durable.delete(id);
  }

  /** What the journal writes now; `written(record)` once that write is durable. */
  record(): LedgerOutboxRecord {
    return {
      fills: [...this.fills],
      funding: [...this.funding],
      ...(this.busts.length > 0 && { busts: [...this.busts] }),
      fundingFrom: this.fundingCursor,
    };
  }

  /** The journal write holding `record` is durable: its entries may be sent. */
  written(record: LedgerOutboxRecord): void {
    for (const f of record.fills) this.durable.add(`f:${f.venueFillId}`);
    for (const f of record.funding) this.durable.add(`p:${f.venueFundingId}`);
    for (const b of record.busts ?? []) this.durable.add(`b:${b.venueFillId}@${b.lots}`);
  }
}
