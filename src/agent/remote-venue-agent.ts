import path from 'node:path';
import {
  applyTick,
  canonicalSymbol,
  createSymbolMap,
  type EngineState,
  summarize,
  type InstrumentOverride,
  type Quote,
} from '../engine/index.js';
import { renderSignalText } from '../language/index.js';
import type { AgentSignal } from '../protocol/agent-signal.js';
import type { AgentClient } from './agent-client.js';
import { AgentJournal } from './agent-journal.js';
import { ExecutingAgent, type AgentOptions, type FlattenItem } from './executing-agent.js';
import { ledgerBustOf } from './ledger-fills.js';
import { LedgerOutbox, type LedgerOutboxRecord } from './ledger-outbox.js';
import { clientOrderId } from './client-order-id.js';
import type { EntryGuard } from './entry-guard.js';
import { heldOf } from './risk-ledger.js';
import { Backoff, sleep } from './backoff.js';
import { DryRunVenue } from './dry-run-venue.js';
import { executedJson, type ExecutedSignal } from './executed-signal.js';
import { quotelessEntryQuote } from './quoteless-entry.js';
import { VenueRefusedError, VenueUnreachableError, type Venue, type VenueHoldings } from './venue.js';
import { emptyLinks, type VenueBook } from './venue-book.js';
import { endedExits } from './ended-exits.js';
import { carryOutTick, executeSignal, finishMoves, hasUnfinishedMoves } from './venue-execution.js';
import { applyReports } from './venue-reports.js';
import { VENUE_JOURNAL, type DepartedOrder, type DepartedPosition, type VenueJournalFile } from './venue-journal.js';
import { settledFor, withDeparted, withoutDeparted, type Departed } from './departed-holdings.js';
import { reconcile, type NotManaged } from './reconciliation.js';
import {
  DEFAULT_UNPROTECTED_AFTER,
  DEFAULT_UNPROTECTED_RULE,
  lackingProtection,
  ProtectionWatch,
  type UnprotectedRule,
} from './protection-state.js';
import { protectPositions } from './protection-pass.js';
import { isSimulated } from './simulated-venue.js';
import { OrderTiming } from './order-timing.js';
import { entriesOnly, entryDeadline, type EntryDeadline } from './signal-age.js';
import { SymbolFailures } from './symbol-failures.js';
import { mergeLane } from './lane-merge.js';

/** The published state is refreshed at least this often (each refresh reads the venue's funds). */
const PUBLISH_EVERY_MS = 10_000;
/** The venue's positions and open orders are compared with the book this often, by default (`--reconcile-every`). */
export const RECONCILE_EVERY_MS = 5000;
/** How often the venue's funding payments are read by default (a venue books them every few hours). */
export const FUNDING_EVERY_MS = 60_000;
/** Signals of different symbols carried out at once, when the venue does not say (`Venue.concurrentSignals`). */
const CONCURRENT_SIGNALS = 16;
/** A management pass waits for the lanes to be idle, but is queued after this many intervals at the latest. */
const PASS_AT_LATEST = 5;

export interface RemoteVenueAgentOptions extends AgentOptions {
  venue: Venue;
  dryRun: boolean;
  /** Signal symbol → venue symbol, from the instruments file; the venue finds the others itself. */
  symbolMap: Readonly<Record<string, string>>;
  /** Pip size per signal symbol, from the instruments file (the venue's instruments have pips of 1). */
  pipSizes: Readonly<Record<string, number>>;
  defaultVolumeLots: number | null;
  /** How often the venue's reports are taken and the quotes of symbols with positions (and, where the engine fills them, pending entries) read. */
  manageEveryMs: number;
  /** How often the book is reconciled with the venue's positions and open orders (at the first management pass after it); default RECONCILE_EVERY_MS. */
  reconcileEveryMs?: number;
  /** How often the venue's funding payments are read (where it has them); default FUNDING_EVERY_MS. */
  fundingEveryMs?: number;
  /** What becomes of a position whose stop the venue refused `after` times in a row; default keep after 3. */
  unprotected?: { rule: UnprotectedRule; after: number };
}

/**
 * The agent on a venue elsewhere (an exchange through CCXT, a broker through FIX, or either in a
 * dry run): the venue is the truth and the book its projection. Before a signal the book is
 * brought up to date from the venue (instrument, quote, balance); the engine decides on it and
 * the venue carries the decisions out. What the venue does on its own comes as reports, taken
 * through the one order tracker at each management pass or when its stream wakes the agent, and
 * the book is reconciled with the venue's positions and orders every few seconds.
 *
 * A signal executed but not written is executed again after a restart, and its client order
 * ids make the venue answer the orders already placed instead of placing them twice. The venue
 * unreachable: the signal is retried with backoff, the state says disconnected, and nothing is
 * acknowledged until the venue answered.
 */
export class RemoteVenueAgent extends ExecutingAgent<Venue, RemoteVenueAgentOptions> {
  /**
   * The book as last written to the journal: what the published state shows. The book changes
   * before it is written (a fill taken, an order placed), and a state published in between would
   * show what a restart, reading the journal, may not have.
   */
  private written: VenueBook | null = null;
  /** Signals whose execution began and has no outcome yet (kept on disk). */
  private readonly inFlight = new Set<string>();
  /** Those signals themselves, by id (kept on disk): the next run finishes them first. */
  private readonly inFlightSignals = new Map<string, AgentSignal>();
  /** Positions the start's reconciliation dropped while signals were in flight (kept on disk). */
  private departed: DepartedPosition[] = [];
  /** Pending orders the start's reconciliation dropped while signals were in flight (kept on disk). */
  private departedOrders: DepartedOrder[] = [];
  private fundingReading = false;
  private connected = false;
  private lastError: string | null = null;
  /** When the venue stopped answering (ISO time); null while it answers. */
  private unreachableSince: string | null = null;
  /** Symbols whose management pass fails, each managed apart from the others. */
  private readonly symbolFailures = new SymbolFailures();
  /** A management pass is queued or running: the timer's next one is skipped. */
  private passQueued = false;
  /** A wake of the venue's stream is queued and not yet started (`woken`). */
  private streamedQueued = false;
  /** When the last management pass was queued (epoch ms). */
  private lastPassAt = 0;
  /** Lanes whose orders may be on their way: a funds read meanwhile may or may not include them. */
  private sendingLanes = 0;
  /** Bumped when a lane starts sending and when its outcome is in the book: a funds read across a bump is not adopted. */
  private venueChanges = 0;
  /** In-flight signal → the ticket reserved for what it opens (kept on disk, so a restart opens the same ticket). */
  private readonly tickets = new Map<string, number>();
  /** Signal → the venue's quote its execution was first decided at, for the ledger's slippage (kept on disk until it is settled). */
  private readonly receiptQuotes = new Map<string, Record<string, Quote>>();
  /** In-flight signals whose record (the mark, its ticket, its quote at receipt) is not on disk yet: written before any of its orders leaves. */
  private readonly unwrittenInFlight = new Set<string>();
  /** The venue's balance was taken into the book in this run (the first read is, whatever runs beside it). */
  private balanceRead = false;
  /** Position ticket → why the venue refused its stop's last move (the old stop still stands), for the published state. */
  private readonly refusedMoves = new Map<number, string>();
  /** What the venue holds that the book does not, as the last reconciliation found it (published). */
  private notManaged: NotManaged[] = [];
  /** Not-managed holdings already logged at error, by kind and id: each is told once while it lasts. */
  private readonly toldNotManaged = new Set<string>();
  /** Pending-order ticket → lots the venue filled of it while it stays open (published). */
  private partlyFilled: Record<string, number> = {};
  /** Positions whose stop and targets must be placed again (reduced, adopted, gone from the venue) until the venue takes them. */
  private readonly reprotectDue = new Set<number>();
  private readonly watch: ProtectionWatch;
  private lastReconciledAt = 0;

  constructor(options: RemoteVenueAgentOptions) {
    super(options, remoteVenue(options), {
      concurrentSignals: options.venue.concurrentSignals ?? CONCURRENT_SIGNALS,
      publishEveryMs: PUBLISH_EVERY_MS,
      lockTitle: `signalgate agent on ${options.venue.name}`,
      directoryOwner: "the agent's",
    });
    this.watch = new ProtectionWatch(
      options.unprotected?.rule ?? DEFAULT_UNPROTECTED_RULE,
      options.unprotected?.after ?? DEFAULT_UNPROTECTED_AFTER,
    );
  }

  /**
   * Takes up the book from the venue's journal (or a new one), reconciles it with what the venue
   * holds, and finishes stop moves the last run began. False: the agent stopped meanwhile.
   */
  protected async open(dir: string): Promise<boolean> {
    const { options } = this;
    const log = options.log;
    const safeName = options.venue.name.replace(/[^a-zA-Z0-9._-]+/g, '-');
    const file = path.join(dir, `venue-${safeName}${options.dryRun ? '-dry-run' : ''}.json`);
    const stored = await AgentJournal.load(file, VENUE_JOURNAL);
    await this.takeCarriedEntries(file, stored);
    this.book = stored?.book ?? emptyLinks(freshState(options));
    this.agentId ??= stored?.agentId ?? null;
    for (const entry of stored?.executed ?? []) this.executed.set(entry.id, entry);
    for (const id of stored?.inFlight ?? []) this.inFlight.add(id);
    for (const [id, ticket] of Object.entries(stored?.tickets ?? {}))
      if (this.inFlight.has(id)) this.tickets.set(id, ticket);
    for (const signal of stored?.inFlightSignals ?? [])
      if (this.inFlight.has(signal.id)) this.inFlightSignals.set(signal.id, signal);
    for (const [id, quotes] of Object.entries(stored?.receipts ?? {}))
      if (this.inFlight.has(id)) this.receiptQuotes.set(id, quotes);
    this.departed = stored?.departed ?? [];
    this.departedOrders = stored?.departedOrders ?? [];
    this.ledger = new LedgerOutbox(stored?.ledger);
    this.journal = new AgentJournal<VenueJournalFile>(
      file,
      () =>
        this.journalSnapshot({
          venue: options.venue.name,
          agentId: this.agentId,
          book: this.book,
          executed: executedJson(this.executed.values()),
          inFlight: [...this.inFlight],
          inFlightSignals: [...this.inFlightSignals.values()],
          ...(this.tickets.size > 0 && { tickets: Object.fromEntries(this.tickets) }),
          ...(this.receiptQuotes.size > 0 && { receipts: Object.fromEntries(this.receiptQuotes) }),
          ...(this.departed.length > 0 && { departed: this.departed }),
          ...(this.departedOrders.length > 0 && { departedOrders: this.departedOrders }),
          ledger: this.ledger.record(),
        }),
      (written) => {
        this.journalWritten(written);
        this.written = written.book as VenueBook;
        this.ledger.written(written.ledger as LedgerOutboxRecord);
      },
      undefined,
      // Orders leave the process: a basket's signals the server hands over in two messages wait
      // for the write under way, not for it and a whole write after it (see AgentJournal).
      2,
    );
    const holdings = await this.untilReachable('connect', () => this.venue.open());
    if (holdings === null) return false;
    // Stops and targets of the book no longer open ended while the agent was away: looked up
    // with the reports below, so one that filled closes its position rather than being placed again.
    this.venue.followEnded?.(endedExits(this.book, holdings.orders));
    // Fills the venue tells on opening (made while the agent was away, or reported before it
    // stopped and not yet in its book) go into the book first: reconciled before them, a pending
    // order filled and gone from the venue would leave the book, and its position unmanaged.
    let reported = await this.untilReachable("apply the venue's reports", () => this.takeReports());
    if (reported === null) return false;
    // Reports change what the venue holds (a position closed by its stop, a stop placed for the
    // lots left): the holdings read before them would show those stops as gone.
    let current: VenueHoldings = holdings;
    while (reported > 0) {
      const again = await this.untilReachable('read the venue again', async () => {
        const account = await this.venue.account();
        return { account, reported: await this.takeReports() };
      });
      if (again === null) return false;
      ({ account: current, reported } = again);
    }
    if ((await this.untilReachable('reconcile the book with the venue', () => this.reconcile(current))) === null)
      return false;
    // A stop move the last run decided and did not see through: finished before any signal.
    if (hasUnfinishedMoves(this.book)) {
      const finished = await this.untilReachable('finish moving the stops', () => finishMoves(this.venue, this.book));
      if (finished === null) return false;
      this.book = finished.book;
      for (const { position, reason } of finished.refused) {
        log.warn(`${reason}; trying again at the next quote`);
        this.refusedMoves.set(position, reason);
      }
      log.info(
        { orders: finished.orders.map((o) => ({ id: o.id, clientId: o.clientId, kind: o.kind, price: o.price })) },
        'finished moving the stops the last run had begun to move',
      );
    }
    // Positions without their stop (refused, or adopted above): protected before any signal.
    if ((await this.untilReachable('place the stops the positions lack', () => this.protectAll())) === null)
      return false;
    await this.journal.save();
    log.info(
      {
        venue: this.venue.name,
        file,
        dryRun: options.dryRun,
        positions: this.book.state.positions.length,
        orders: this.book.state.orders.length,
      },
      'venue ready',
    );
    return true;
  }

  /** A timer's management passes, the venue's stream's wakes and, where the venue has them, its funding payments. */
  protected start(): void {
    this.lastPassAt = Date.now();
    this.timers.push(setInterval(() => void this.manage(), this.options.manageEveryMs));
    this.venue.onReports?.((why) => this.woken(why));
    if (this.venue.funding !== undefined) {
      void this.readFunding();
      this.timers.push(setInterval(() => void this.readFunding(), this.options.fundingEveryMs ?? FUNDING_EVERY_MS));
    }
  }

  /**
   * Signals in flight when the last run stopped are finished first, from the journal: the server
   * hands none out again once past its age, and their orders may stand at the venue.
   */
  protected override resumeInFlight(): void {
    for (const signal of [...this.inFlightSignals.values()].sort((a, b) => a.seq - b.seq)) this.dispatch(signal);
  }

  /**
   * The book made the projection of what the venue holds (see reconciliation.ts): positions gone
   * there leave it and their orders are cancelled, positions reduced there shrink, entries filled
   * while the agent did not look are adopted, and what the venue holds that the book does not is
   * published as not managed and logged at error (once while it lasts). Stops and targets due are
   * placed by the protection pass that follows.
   */
  private async reconcile(holdings: VenueHoldings): Promise<void> {
    const log = this.options.log;
    const done = reconcile(this.book, holdings, {
      settling: this.inFlight.size > 0,
      // Stops the look-ups before this comparison found cancelled, expired or unknown: gone.
      ...(this.venue.endedUnfilled !== undefined && { endedUnfilled: this.venue.endedUnfilled() }),
      ...(this.venue.endedInPart !== undefined && { endedInPart: this.venue.endedInPart() }),
    });
    this.book = done.book;
    this.lastReconciledAt = Date.now();
    for (const finding of done.findings) log[finding.level](finding.fields, finding.message);
    // A signal in flight may have closed a dropped position, or cancelled a dropped pending order:
    // executed again, it is told what the venue did.
    if (this.inFlight.size > 0) {
      for (const d of done.dropped) this.departed.push({ ...d, signals: [...this.inFlight] });
      for (const d of done.droppedOrders) this.departedOrders.push({ ...d, signals: [...this.inFlight] });
    }
    for (const ticket of done.reprotect) this.reprotectDue.add(ticket);
    this.partlyFilled = done.partlyFilled;
    const seen = new Set(done.notManaged.map((n) => `${n.kind}:${n.id}`));
    for (const holding of done.notManaged) {
      if (this.toldNotManaged.has(`${holding.kind}:${holding.id}`)) continue;
      this.toldNotManaged.add(`${holding.kind}:${holding.id}`);
      log.error(
        { notManaged: holding },
        `the venue holds ${holding.kind === 'position' ? 'a position' : 'an order'} the agent does not manage: ${holding.reason}; see to it at the venue`,
      );
    }
    for (const told of this.toldNotManaged) if (!seen.has(told)) this.toldNotManaged.delete(told);
    const changed = done.findings.length > 0;
    for (const order of done.cancel) {
      try {
        await this.venue.cancel(order);
      } catch (error) {
        if (!(error instanceof VenueRefusedError)) throw error;
        log.error(
          { venueOrder: order.id, symbol: order.symbol, err: error.message },
          `${this.venue.name} refused to cancel an order of a position that is gone; cancel it at the venue`,
        );
      }
    }
    // Published once the cancels are done, so what the state shows is a finished comparison.
    this.notManaged = done.notManaged;
    if (changed) await this.journal.save();
    void this.publish();
  }

  /**
   * Every few seconds (and at the first pass after the venue was unreachable): the venue's
   * positions and orders, read whole, against the book. Fills reported while they were read make
   * the read stale: the comparison waits for the next pass.
   */
  private async reconcileIfDue(): Promise<void> {
    // A dry run's book holds what was not sent: the venue has none of it to compare.
    if (
      this.options.dryRun ||
      Date.now() - this.lastReconciledAt < (this.options.reconcileEveryMs ?? RECONCILE_EVERY_MS)
    )
      return;
    const account = await this.venue.account();
    // A stop or target gone from the open orders is looked up by its id with the reports: filled,
    // it closes its position there; only one cancelled (or unknown) is found gone and placed again.
    this.venue.followEnded?.(endedExits(this.book, account.orders));
    if ((await this.takeReports()) > 0) return;
    await this.reconcile(account);
  }

  /** The stops and targets positions lack, placed (see protection-pass.ts). */
  private async protectAll(): Promise<void> {
    await protectPositions(
      {
        venue: this.venue,
        watch: this.watch,
        log: this.options.log,
        due: this.reprotectDue,
        book: () => this.book,
        setBook: (book) => (this.book = book),
        save: () => this.journal.save(),
        publish: () => void this.publish(),
      },
      Date.now(),
    );
  }

  protected venueSymbol(canonical: string): string | null {
    return (
      this.options.symbolMap[canonical] ??
      this.book.state.config.symbolMap.toBroker[canonical] ??
      this.venue.findSymbol?.(canonical) ??
      null
    );
  }

  /**
   * The signal's outcome is in the book: its ticket is no longer reserved, and one it did not use
   * is given back when no later signal took one (so signals one after another number as before).
   */
  private releaseTicket(id: string): void {
    const ticket = this.tickets.get(id);
    if (ticket === undefined) return;
    this.tickets.delete(id);
    const state = this.book.state;
    const used = state.positions.some((p) => p.ticket === ticket) || state.orders.some((o) => o.ticket === ticket);
    if (!used && state.nextTicket === ticket + 1) this.book = { ...this.book, state: { ...state, nextTicket: ticket } };
  }

  protected async carryOut(signal: AgentSignal): Promise<void> {
    let outcome: ExecutedSignal['outcome'] | null;
    const before = this.book.state;
    if (signal.flatten) {
      outcome = await this.flatten(signal);
      if (outcome === null) return; // stopping: not acknowledged, finished after a restart
      await this.settle(signal, outcome, before);
      return;
    }
    // The venue stopped answering while this signal waited: when, for the message of an expired entry.
    let outage: string | null = null;
    const deadline = entryDeadline(signal.expiresAt, Date.now, () => outage);
    // Nothing of the signal can have left yet (not in flight): an entry-only one past its age is refused now.
    const expired =
      this.inFlight.has(signal.id) || !entriesOnly(signal.signal)
        ? null
        : deadline.refusal(`its ${signal.signal.action} order`);
    if (expired !== null) {
      outcome = { status: 'rejected', message: expired, result: null };
    } else {
      // Said on disk first: if the agent stops before the outcome is written, the next run
      // knows the signal's orders may stand already, and has the signal to finish it.
      let again = this.inFlight.has(signal.id);
      if (!again) {
        this.inFlight.add(signal.id);
        this.inFlightSignals.set(signal.id, signal);
        // The ticket of what it may open is taken now and written with it: other symbols' lanes
        // take tickets meanwhile, and a restart must open (and protect) under the same one.
        const ticket = this.book.state.nextTicket;
        this.tickets.set(signal.id, ticket);
        this.book = { ...this.book, state: { ...this.book.state, nextTicket: ticket + 1 } };
        // Written with its quote at receipt, once read, before any order leaves (see execute).
        this.unwrittenInFlight.add(signal.id);
      }
      let sending = again;
      outcome = await this.untilReachable(
        `execute signal ${signal.id}`,
        async () => {
          outage ??= this.unreachableSince;
          try {
            return await this.execute(signal, again, deadline, () => (sending = true));
          } finally {
            again = sending; // a retry after a lost answer: the orders may stand
          }
        },
        {
          wakeAt: Date.parse(signal.expiresAt),
          // Past its age with none of its orders sent yet (the venue unreachable all along): refused without the venue.
          settle: () => {
            outage ??= this.unreachableSince;
            const late =
              sending || !entriesOnly(signal.signal) ? null : deadline.refusal(`its ${signal.signal.action} order`);
            return late === null ? null : { status: 'rejected' as const, message: late, result: null };
          },
        },
      );
      if (outcome === null) return; // stopping: not acknowledged, handed out again after a restart
      this.releaseTicket(signal.id);
    }
    await this.settle(signal, outcome, before);
  }

  /**
   * The signal out of flight, its outcome recorded with the venue's quote it was first decided
   * at (the one read, or held fresh, to carry it out), written down, then acknowledged.
   */
  private async settle(signal: AgentSignal, outcome: ExecutedSignal['outcome'], before: EngineState): Promise<void> {
    this.inFlight.delete(signal.id);
    this.inFlightSignals.delete(signal.id);
    this.unwrittenInFlight.delete(signal.id);
    const receipt = this.receiptQuotes.get(signal.id) ?? {};
    this.receiptQuotes.delete(signal.id);
    await this.commit(signal, this.record(signal, outcome, before, receipt));
  }

  /**
   * A flatten: every position of the account closed and every pending order cancelled at the
   * venue, on every symbol. Not an engine signal: each symbol the book holds is taken flat
   * (positionflat), then what the venue still holds beside the book is closed and cancelled, and
   * the venue is read again: what remains fails the flatten, named.
   */
  private async flatten(signal: AgentSignal): Promise<ExecutedSignal['outcome'] | null> {
    let again = this.inFlight.has(signal.id);
    if (!again) {
      this.inFlight.add(signal.id);
      this.inFlightSignals.set(signal.id, signal);
      await this.journal.save();
    }
    const outcome = await this.untilReachable(`flatten the account (signal ${signal.id})`, async () => {
      try {
        return await this.flattenOn(signal, again);
      } finally {
        again = true;
      }
    });
    if (outcome !== null) {
      this.inFlight.delete(signal.id);
      this.inFlightSignals.delete(signal.id);
    }
    return outcome;
  }

  private async flattenOn(signal: AgentSignal, again: boolean): Promise<ExecutedSignal['outcome']> {
    const items: FlattenItem[] = [];
    for (const symbol of this.flattenSymbols()) {
      const canonical = canonicalSymbol(this.book.state.config.symbolMap, symbol);
      // Closed at the venue's price: a quote read now, so the engine's close is priced near it.
      try {
        const quote = await this.venue.quote(symbol);
        this.book = {
          ...this.book,
          state: { ...this.book.state, quotes: { ...this.book.state.quotes, [symbol]: quote } },
        };
      } catch (error) {
        if (error instanceof VenueUnreachableError) throw error;
      }
      const done = await executeSignal(
        this.venue,
        this.book,
        {
          id: `${signal.id}/${symbol}`,
          signal: { symbol: canonical, action: 'positionflat' },
          text: `${canonical},positionflat`,
        },
        Date.now(),
        again,
      );
      this.book = done.book;
      items.push({
        symbol,
        status: done.outcome.status,
        message: done.outcome.message,
        orders: done.outcome.result?.orders ?? [],
      });
    }
    await this.journal.save();
    // What the venue holds beside the book (opened by hand, not managed): closed and cancelled too.
    const account = await this.venue.account();
    for (const position of account.positions ?? []) {
      const id = clientOrderId(`${signal.id}/${position.symbol}/${position.side}`, 'c1');
      try {
        const order = await this.venue.close(position, position.volume, id, again);
        items.push({
          symbol: position.symbol,
          status: order.filled > 0 ? 'executed' : 'failed',
          message: `closed ${order.filled} of ${position.volume} lots of the ${position.side} position the agent did not manage`,
          orders: [order],
        });
      } catch (error) {
        if (!(error instanceof VenueRefusedError)) throw error;
        items.push({ symbol: position.symbol, status: 'failed', message: error.message, orders: [] });
      }
    }
    for (const order of account.orders) {
      try {
        await this.venue.cancel({ id: order.id, symbol: order.symbol, ...(order.trigger && { trigger: true }) });
        items.push({ symbol: order.symbol, status: 'executed', message: `cancelled order ${order.id}`, orders: [] });
      } catch (error) {
        if (!(error instanceof VenueRefusedError)) throw error;
        items.push({ symbol: order.symbol, status: 'failed', message: error.message, orders: [] });
      }
    }
    const after = await this.venue.account();
    await this.reconcile(after);
    await this.journal.save();
    return this.flattened(signal, items, { positions: after.positions ?? [], orders: after.orders });
  }

  /** Brings the book up to date for the signal's symbol (instrument, quote, balance), then executes it. */
  private async execute(
    signal: AgentSignal,
    again: boolean,
    deadline: EntryDeadline,
    sending: () => void,
  ): Promise<ExecutedSignal['outcome']> {
    const venue = this.venue;
    const canonical = canonicalSymbol(this.book.state.config.symbolMap, signal.signal.symbol);
    const symbol = this.venueSymbol(canonical);
    if (symbol === null) {
      return {
        status: 'rejected',
        message: `${canonical} is not a market of ${venue.name}; map it to one in the instruments file ("symbolMap": {"${canonical}": "BTC/USDT:USDT"})`,
        result: null,
      };
    }
    const spec = venue.instrument(symbol);
    if (spec === null)
      return {
        status: 'rejected',
        message: `${venue.name} gives no usable instrument data for ${symbol} (tick size, lot step), or it is an inverse market, which the agent does not trade`,
        result: null,
      };
    let quote;
    let account;
    // Quotes the venue refuses: a pending entry at a price sized in lots still goes out (its stand-in quote is dropped after).
    let standIn = false;
    // What the venue read again because what it held was stale: said in the outcome.
    const reread: string[] = [];
    const quoted = venue.quote(symbol, reread).catch((error: unknown) => {
      const stand = error instanceof VenueRefusedError ? quotelessEntryQuote(signal.signal, spec) : null;
      if (stand === null) throw error;
      standIn = true;
      return stand;
    });
    const changes = this.venueChanges;
    try {
      [quote, account] = await Promise.all([quoted, venue.funds(symbol, reread)]);
    } catch (error) {
      if (error instanceof VenueRefusedError)
        return {
          status: 'rejected',
          message: `${venue.name} refused to quote ${symbol} or to give the balance: ${error.message}`,
          result: null,
        };
      throw error;
    }
    // The first quote stays the signal's receipt: a retry (a lost answer, a restart) reads another.
    if (!standIn && !this.receiptQuotes.has(signal.id)) {
      this.receiptQuotes.set(signal.id, { [symbol]: quote });
      this.unwrittenInFlight.add(signal.id);
    }
    const { symbol: _name, ...venueSpec } = spec;
    const override: InstrumentOverride = {
      ...venueSpec,
      pipSize: this.options.pipSizes[canonical] ?? venueSpec.pipSize,
    };
    const state = this.book.state;
    // Read while another lane's orders were on their way, the balance may or may not include
    // them: the book's (the last read before, plus the profit of outcomes since) is used instead,
    // so the signals of a basket are sized on the same figure whatever their timing.
    const adopt = !this.balanceRead || (this.sendingLanes === 0 && this.venueChanges === changes);
    this.balanceRead = true;
    const mapping = { ...state.config.symbolMap.toBroker, [canonical]: symbol };
    const instruments: Record<string, InstrumentOverride> = { ...state.config.instruments, [canonical]: override };
    this.book = {
      ...this.book,
      state: {
        ...state,
        config: { ...state.config, currency: account.currency, symbolMap: createSymbolMap(mapping), instruments },
        balance: adopt ? account.balance : state.balance,
        quotes: { ...state.quotes, [symbol]: quote },
      },
    };
    // Positions gone at the venue while this signal was in flight are the engine's to close
    // again: the venue then says what its close did (the order looked up by its client id).
    const departed = {
      positions: this.departed.filter((d) => d.signals.includes(signal.id)),
      orders: this.departedOrders.filter((d) => d.signals.includes(signal.id)),
    };
    const none = departed.positions.length === 0 && departed.orders.length === 0;
    const live = none ? this.book : withDeparted(this.book, departed);
    // What it opens takes the ticket reserved for it (the book's next one for a journal from before reservations).
    const ticket = this.tickets.get(signal.id);
    const book = ticket === undefined ? live : { ...live, state: { ...live.state, nextTicket: ticket } };
    const guard = await this.guardFor(signal, account, heldOf(this.notManaged.filter((n) => n.kind === 'position')));
    // The signal in flight, its ticket and its quote at receipt on disk before its orders leave.
    if (this.unwrittenInFlight.delete(signal.id)) await this.journal.save();
    try {
      const outcome = await this.executeOn(venue, book, symbol, signal, departed, again, deadline, sending, guard);
      return reread.length === 0 ? outcome : { ...outcome, message: `${outcome.message}; ${reread.join('; ')}` };
    } finally {
      if (standIn) {
        const { [symbol]: _standIn, ...quotes } = this.book.state.quotes;
        this.book = { ...this.book, state: { ...this.book.state, quotes } };
      }
    }
  }

  private async executeOn(
    venue: Venue,
    book: VenueBook,
    symbol: string,
    signal: AgentSignal,
    departed: Departed,
    again: boolean,
    deadline: EntryDeadline,
    sending: () => void,
    guard: EntryGuard | null,
  ): Promise<ExecutedSignal['outcome']> {
    // From here orders may leave: a retry must look them up first.
    sending();
    this.sendingLanes += 1;
    this.venueChanges += 1;
    try {
      const timing = new OrderTiming(venue);
      const done = await executeSignal(
        timing.venue,
        book,
        { id: signal.id, signal: signal.signal, text: renderSignalText(signal.signal) },
        Date.now(),
        again,
        deadline,
        guard,
      );
      // Other symbols' lanes changed the book meanwhile: only this symbol's part is this signal's.
      this.book = mergeLane(this.book, book, withoutDeparted(done.book, departed), symbol);
      // Published with the venue's own reason until the protection pass tries again.
      this.watch.refusedAtPlacement(done.unprotected, Date.now());
      this.departed = settledFor(this.departed, signal.id);
      this.departedOrders = settledFor(this.departedOrders, signal.id);
      const message = this.options.dryRun ? `dry run, nothing sent: ${done.outcome.message}` : done.outcome.message;
      return {
        status: done.outcome.status,
        message,
        result: this.options.dryRun ? { dryRun: true, ...done.outcome.result } : done.outcome.result,
        timings: timing.result(),
      };
    } catch (error) {
      if (error instanceof VenueUnreachableError) throw error;
      return {
        status: 'failed',
        message: `the agent failed on ${venue.name}: ${(error as Error).message}`,
        result: null,
      };
    } finally {
      this.sendingLanes -= 1;
      this.venueChanges += 1;
    }
  }

  /**
   * Runs `action` until the venue answers: while it is unreachable, retries with backoff and
   * publishes itself disconnected. Resolves null when the agent stops first. `settle`: asked
   * before each retry, an answer that makes asking the venue needless (a signal past its age);
   * `wakeAt` (epoch ms): a retry is due then too, whatever the backoff (that age's end).
   */
  private async untilReachable<T>(
    what: string,
    action: () => Promise<T>,
    retry: { wakeAt?: number; settle?: () => T | null } = {},
  ): Promise<T | null> {
    const { wakeAt, settle } = retry;
    const backoff = new Backoff(1000, 60_000);
    for (let attempt = 0; ; attempt += 1) {
      if (this.stopping.signal.aborted) return null;
      const settled = attempt > 0 ? (settle?.() ?? null) : null;
      if (settled !== null) return settled;
      try {
        const result = await action();
        if (!this.connected) {
          this.connected = true;
          this.lastError = null;
          void this.publish();
        }
        this.unreachableSince = null;
        return result;
      } catch (error) {
        if (!(error instanceof VenueUnreachableError)) throw error;
        let wait = backoff.next();
        // Just past the deadline, so the retry finds it passed.
        if (wakeAt !== undefined && wakeAt >= Date.now()) wait = Math.min(wait, wakeAt - Date.now() + 10);
        this.options.log.warn(
          { venue: this.venue.name, err: error.message, retryInMs: wait },
          `the venue is unreachable; will ${what} when it answers`,
        );
        this.connected = false;
        this.lastError = error.message;
        this.unreachableSince ??= new Date().toISOString();
        void this.publish();
        await sleep(wait, this.stopping.signal);
      }
    }
  }

  /**
   * Takes the venue's reports, then reads the quotes of symbols the book holds and carries out
   * what the engine does at them: breakeven, trailing, and pending entries filled where the
   * engine fills them (`Venue.fills`). Skipped while the last pass is queued or running.
   */
  private manage(): void {
    if (this.passQueued || this.stopping.signal.aborted) return;
    // Its account-wide parts hold every lane: while signals are being carried out it waits (as
    // a pass waited for a signal before), but never longer than a few passes' time.
    if (this.lanes.size > 0 && Date.now() - this.lastPassAt < PASS_AT_LATEST * this.options.manageEveryMs) return;
    this.lastPassAt = Date.now();
    this.passQueued = true;
    void this.managePass().finally(() => (this.passQueued = false));
  }

  /**
   * A management pass, account-wide: the venue's reports, unfinished stop moves, each symbol's
   * quote, reconciliation and the protection pass. One item, so it holds the lanes once: split
   * into parts around per-symbol items, a signal queued between the parts held every symbol
   * behind it (one slow order kept a basket waiting).
   */
  private async managePass(): Promise<void> {
    try {
      await this.lanes.whole(async () => {
        // The venue's own fills first: a stop the broker filled closes its position, and a move for it is then dropped.
        await this.takeReports();
        const waiting = new Set<string>();
        if (hasUnfinishedMoves(this.book)) {
          const finished = await finishMoves(this.venue, this.book);
          this.book = finished.book;
          await this.journal.save();
          for (const { position, symbol, reason } of finished.refused) {
            this.options.log.warn({ symbol }, `${reason}; trying again at the next quote`);
            this.refusedMoves.set(position, reason);
            waiting.add(symbol);
          }
          void this.publish();
        }
        // A symbol with pending entries only needs quotes where the engine fills them.
        const entries = this.venue.fills.entries === 'engine' ? this.book.state.orders.map((o) => o.symbol) : [];
        const symbols = new Set([...this.book.state.positions.map((p) => p.symbol), ...entries]);
        this.symbolFailures.keepOnly(symbols);
        // Each symbol apart: one whose quote, stop or cancel fails never keeps the others unmanaged.
        let reached = symbols.size === 0;
        let unreachable: Error | null = null;
        for (const symbol of symbols) {
          if (waiting.has(symbol)) continue;
          const result = await this.manageOne(symbol);
          if (result === 'reached') reached = true;
          else if (result instanceof VenueUnreachableError) unreachable = result;
        }
        // After the quotes: a target the engine saw reached is in the book before the venue's sizes are compared.
        await this.reconcileIfDue();
        await this.protectAll();
        if (unreachable !== null && !reached) {
          this.connected = false;
          this.lastError = unreachable.message;
          this.lastReconciledAt = 0;
        } else if (!this.connected) {
          this.connected = true;
          void this.publish();
        }
      });
    } catch (error) {
      if (error instanceof VenueUnreachableError) {
        this.connected = false;
        this.lastError = error.message;
        // Back, it is compared at once: the venue may have filled anything meanwhile.
        this.lastReconciledAt = 0;
      }
      this.options.log.warn(
        { err: (error as Error).message },
        'managing the positions failed; trying again at the next quote',
      );
    }
  }

  /** A symbol's part of a management pass, its failure told and kept apart from the others'. */
  private async manageOne(symbol: string): Promise<'reached' | 'skipped' | Error> {
    if (this.stopping.signal.aborted) return 'skipped';
    try {
      await this.manageSymbol(symbol);
      const recovered = this.symbolFailures.succeeded(symbol);
      if (recovered) {
        this.options.log.info(
          { symbol, failures: recovered.failures, since: recovered.since },
          'managing the symbol works again',
        );
        void this.publish();
      }
      return 'reached';
    } catch (error) {
      const message = (error as Error).message;
      if (this.symbolFailures.failed(symbol, message, Date.now())) {
        this.options.log.warn(
          { symbol, err: message },
          'managing the symbol failed; the other symbols are managed, and this one is tried again at the next pass',
        );
        void this.publish();
      }
      return error as Error;
    }
  }

  /** One symbol's part of a management pass: its quote, and what the engine does at it. */
  private async manageSymbol(symbol: string): Promise<void> {
    const quote = await this.venue.quote(symbol);
    const from = this.book;
    // Where the venue fills entries, the quote leaves them pending: their fills come as reports.
    const step = applyTick(from.state, { time: Date.now(), symbol, bid: quote.bid, ask: quote.ask }, this.venue.fills);
    if (step.events.length === 0) {
      this.book = { ...from, state: step.state };
      return;
    }
    // A pending entry filled takes a ticket: taken now, before another symbol's lane takes one.
    this.book = { ...from, state: { ...from.state, nextTicket: step.state.nextTicket } };
    // Other symbols' lanes change the book meanwhile: only this symbol's part is this pass's.
    let at = from;
    const write = (result: VenueBook) => {
      this.book = mergeLane(this.book, at, result, symbol);
      at = result;
    };
    const done = await carryOutTick(this.venue, from, step, async (intent) => {
      write(intent);
      await this.journal.save();
    });
    write(done.book);
    for (const warning of done.warnings) this.options.log.warn({ symbol }, warning);
    for (const { position, reason } of done.refused) this.refusedMoves.set(position, reason);
    this.watch.refusedAtPlacement(done.unprotected, Date.now());
    for (const event of step.events) this.options.log.info({ event }, 'account event');
    this.recordFills(from.state, step.state, step.events, done.orders, null);
    await this.journal.save();
    void this.publish();
    void this.sendLedger();
  }

  /**
   * The venue's stream told of its own fills: taken now, between lanes, not at the next pass (one
   * item queued at a time; a wake while it runs queues the next). A stream (re)connected: the
   * reconciliation is due at once.
   */
  private woken(why: 'reports' | 'connected'): void {
    if (this.stopping.signal.aborted) return;
    if (why === 'connected') {
      this.lastReconciledAt = 0;
      this.manage();
      return;
    }
    if (this.streamedQueued) return;
    this.streamedQueued = true;
    void this.lanes
      .whole(async () => {
        this.streamedQueued = false;
        await this.takeReports(true);
      })
      .catch((error: Error) =>
        this.options.log.warn(
          { err: error.message },
          "taking the venue's streamed reports failed; the next pass reads them",
        ),
      );
  }

  /**
   * What the venue did on its own (a pending order filled, a stop or target filled) goes into
   * the book, the log and the published state. The signals concerned were acknowledged when
   * their orders stood: those fills are not their outcome, which a signal has once.
   * `streamed`: only what the venue's stream told (a wake), not every order followed.
   */
  private async takeReports(streamed = false): Promise<number> {
    const reports = await this.venue.reports(streamed ? { streamed } : undefined);
    if (reports.length === 0) return 0;
    const log = this.options.log;
    for (const report of reports) log.info({ report }, 'venue report');
    const before = this.book.state;
    const done = await applyReports(this.venue, this.book, reports, Date.now());
    this.book = done.book;
    for (const error of done.errors) log.error(error.fields, error.message);
    for (const warning of done.warnings) log.warn(warning);
    this.watch.refusedAtPlacement(done.unprotected, Date.now());
    for (const event of done.events) log.info({ event }, 'account event');
    const orders = reports.flatMap((r) => (r.order === null ? [] : [r.order]));
    this.recordFills(before, done.book.state, done.events, orders, null);
    // The ledger is told of every bust, whether or not the book held the fill: it keeps what the venue says.
    const now = Date.now();
    this.ledger.add(
      [],
      [],
      reports.flatMap((r) => (r.type === 'fill_busted' ? [ledgerBustOf(r, now)] : [])),
    );
    await this.journal.save();
    void this.publish();
    void this.sendLedger();
    return reports.length;
  }

  /**
   * The venue's funding payments since the last one taken, into the outbox (with where the next
   * read starts) and on to the server. Beside the lanes: no signal waits for it, and the venue
   * counts its request in the background's share.
   */
  private async readFunding(): Promise<void> {
    const read = this.venue.funding?.bind(this.venue);
    if (read === undefined || this.fundingReading || this.stopping.signal.aborted) return;
    this.fundingReading = true;
    try {
      const payments = await read(this.ledger.fundingFrom);
      // Stopping: left for the next run, which reads them again from the cursor on disk.
      if (this.stopping.signal.aborted) return;
      const taken = this.ledger.takeFunding(payments);
      if (taken === 0) return;
      this.options.log.info({ payments: taken }, 'funding payments read from the venue');
      await this.journal.save();
      void this.sendLedger();
    } catch (error) {
      this.options.log.warn(
        { err: (error as Error).message },
        'reading the funding payments failed; trying again at the next read',
      );
    } finally {
      this.fundingReading = false;
    }
  }

  protected async publishTo(client: AgentClient): Promise<void> {
    // Nothing before the journal's first write (at opening, before the agent is ready).
    const book = this.written;
    if (book === null) return;
    const state = book.state;
    const lacking = lackingProtection(book);
    for (const p of lacking)
      this.watch.seen(
        p.ticket,
        `the venue holds no stop or target of position ${p.ticket}; placing them at the next pass`,
        Date.now(),
      );
    const unprotected = this.watch.published([
      ...lacking,
      ...state.positions.filter((p) => this.reprotectDue.has(p.ticket)),
    ]);
    let account: { balance: number; equity: number; currency: string } = {
      balance: state.balance,
      equity: state.balance,
      currency: state.config.currency,
    };
    if (this.connected) {
      try {
        const read = await this.venue.funds();
        account = { balance: read.balance, equity: read.equity, currency: read.currency };
      } catch (error) {
        if (error instanceof VenueUnreachableError) {
          this.connected = false;
          this.lastError = error.message;
        }
      }
    }
    // The positions and orders as the engine's summary event words them, plus what only the venue's book knows.
    const summary = summarize(state, Date.now());
    await client.publishState({
      ...account,
      venue: this.venue.name,
      connected: this.connected,
      ...(this.lastError !== null && !this.connected ? { disconnectedBecause: this.lastError } : {}),
      dryRun: this.options.dryRun,
      ...this.venue.status?.(),
      ...(this.symbolFailures.list().length > 0 && { failingSymbols: this.symbolFailures.list() }),
      positions: summary.positions.map((p) => ({
        ...p,
        ...this.stopMove(book, p.position, p.sl),
        ...(unprotected.has(p.position) && { unprotected: unprotected.get(p.position) }),
      })),
      orders: summary.orders.map((o) => ({
        ...o,
        ...(this.partlyFilled[String(o.order)] !== undefined && { filled: this.partlyFilled[String(o.order)] }),
      })),
      notManaged: this.notManaged,
      updatedAt: new Date().toISOString(),
    });
  }

  /**
   * A stop move decided and not yet seen through: `sl` is where the stop is going, and until the
   * venue has the new stop the previous one protects the position. `refused`: the venue's reason
   * for refusing the move, which is tried again at each management pass.
   */
  private stopMove(
    book: VenueBook,
    ticket: number,
    sl: number | null,
  ): { stopMove?: { to: number | null; refused: string | null } } {
    if (book.protection[String(ticket)]?.moving === undefined) {
      this.refusedMoves.delete(ticket);
      return {};
    }
    return { stopMove: { to: sl, refused: this.refusedMoves.get(ticket) ?? null } };
  }

  /** The venue's funds are read only while it answers. */
  protected reachable(): boolean {
    return this.connected;
  }

  protected journalName(): string {
    return this.journal.file;
  }

  /** The venue's connection ends once the book is on disk. */
  protected override async afterLastWrite(): Promise<void> {
    await this.venue.shutdown().catch(() => undefined);
  }
}

/** The venue the agent sends to: in a dry run, one that sends nothing. */
function remoteVenue(options: RemoteVenueAgentOptions): Venue {
  const venue = options.venue;
  if (isSimulated(venue))
    throw new Error(`the ${venue.accountName} is its own book, not a venue elsewhere: run it with SimulatedAgent`);
  return options.dryRun ? new DryRunVenue(venue, options.log) : venue;
}

/** A book with nothing in it yet; currency and balance come from the venue with the first signal. */
function freshState(options: RemoteVenueAgentOptions): EngineState {
  return {
    config: {
      currency: 'USDT',
      instruments: {},
      symbolMap: createSymbolMap(options.symbolMap),
      defaultVolumeLots: options.defaultVolumeLots,
    },
    balance: 0,
    quotes: {},
    positions: [],
    orders: [],
    nextTicket: 1,
  };
}
