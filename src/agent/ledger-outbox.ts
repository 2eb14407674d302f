import {
  MAX_REPORT_ENTRIES,
  type LedgerFill,
  type LedgerFunding,
  type LedgerReport,
} from '../protocol/ledger-report.js';

/** What the journal keeps of the ledger: what was not yet confirmed by the server. */
export interface LedgerOutboxRecord {
  fills: LedgerFill[];
  funding: LedgerFunding[];
}

/**
 * The fills and funding payments the agent has not yet seen the server record. Written in the
 * journal with the book step they came from (one file, one write), so a restart finds a fill
 * exactly when it finds its effect on the book, and sends again what it did not see confirmed: the
 * server records each venue id once, so sending twice never counts twice.
 */
export class LedgerOutbox {
  private fills: LedgerFill[];
  private funding: LedgerFunding[];
  /** Ids in the journal write under way, and ids on disk: only those are sent. */
  private writing: string[] = [];
  private readonly durable = new Set<string>();

  constructor(stored: LedgerOutboxRecord | undefined) {
    this.fills = [...(stored?.fills ?? [])];
    this.funding = [...(stored?.funding ?? [])];
    for (const id of this.ids()) this.durable.add(id);
  }

  add(fills: readonly LedgerFill[], funding: readonly LedgerFunding[] = []): void {
    this.fills.push(...fills);
    this.funding.push(...funding);
  }

  get size(): number {
    return this.fills.length + this.funding.length;
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
    return { fills, funding };
  }

  /** The server recorded this report (or knew its entries): they leave the outbox. */
  confirmed(report: LedgerReport): void {
    const fills = new Set(report.fills.map((f) => f.venueFillId));
    const funding = new Set((report.funding ?? []).map((f) => f.venueFundingId));
    this.fills = this.fills.filter((f) => !fills.has(f.venueFillId));
    this.funding = this.funding.filter((f) => !funding.has(f.venueFundingId));
    for (const id of fills) this.durable.delete(`f:${id}`);
    for (const id of funding) this.durable.delete(`p:${id}`);
  }

  /** What the journal writes now; `written()` once that write is durable. */
  record(): LedgerOutboxRecord {
    this.writing = this.ids();
    return { fills: [...this.fills], funding: [...this.funding] };
  }

  written(): void {
    for (const id of this.writing) this.durable.add(id);
  }

  private ids(): string[] {
    return [...this.fills.map((f) => `f:${f.venueFillId}`), ...this.funding.map((f) => `p:${f.venueFundingId}`)];
  }
}
