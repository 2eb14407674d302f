import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Logger } from 'pino';
import { canonicalSymbol, type EngineEvent, type EngineState, type Quote } from '../engine/index.js';
import { createDirectory } from '../files/create-directory.js';
import { looseModes } from '../files/private-files.js';
import { checkEntry, type HeldPosition } from '../risk/entry-check.js';
import { LockFile, type LockRole } from '../process/lock-file.js';
import type { AgentSignal } from '../protocol/agent-signal.js';
import { AgentClient, type TransportChoice } from './agent-client.js';
import type { AgentJournal, JournalRecord } from './agent-journal.js';
import { ledgerFillsOf } from './ledger-fills.js';
import { LedgerOutbox } from './ledger-outbox.js';
import { AgentClosedError } from './agent-errors.js';
import type { EntryGuard } from './entry-guard.js';
import { RiskLedger, type CarriedEntries } from './risk-ledger.js';
import { forgetSettled, type ExecutedSignal } from './executed-signal.js';
import type { Venue, VenueFunds, VenueOrder } from './venue.js';
import type { VenueBook } from './venue-book.js';
import { WorkLanes } from './work-lanes.js';

/** How soon fills the server did not take are sent again. */
const LEDGER_RETRY_MS = 3000;
/** A signal's fills wait this long for the next signals' ones, so signals one after another share a report. */
const LEDGER_GATHER_MS = 200;
/** How long a stop waits for the lanes' work before it saves the journal and ends. */
const SHUTDOWN_GRACE_MS = 5000;
/** risk-days.json is written this long after an entry, once for all the entries meanwhile (the journal carries them). */
const RISK_SAVE_AFTER_MS = 1000;

/**
 * One agent per token directory: two processes executing into the same book would each
 * overwrite the other's. `--paper` is the short form of `--venue paper`.
 */
const AGENT: Omit<LockRole, 'title'> = {
  name: 'agent',
  place: 'with the same token',
  runsAs: (args) =>
    args.includes('agent') && args.some((arg) => arg === '--paper' || arg === '--venue' || arg.startsWith('--venue=')),
};

/** What every agent is given: its server, its token, where its journal lives. */
export interface AgentOptions {
  server: string;
  token: string;
  transport: TransportChoice;
  /** `SIGNALGATE_DATA_DIR`: the journal lives under `<dataDir>/agents/<token digest>/`. */
  dataDir: string;
  log: Logger;
}

/** What sets one kind of agent apart in the parts all agents share. */
export interface AgentKind {
  /** Signals of different symbols carried out at once (see work-lanes.ts). */
  concurrentSignals: number;
  /** How often the state is published and the loss watched. */
  publishEveryMs: number;
  /** How the lock names the agent to a second one started on the same token. */
  lockTitle: string;
  /** Whose directory it is, in the message when it cannot be made: "the agent's". */
  directoryOwner: string;
}

/** One symbol's part of a flatten. */
export interface FlattenItem {
  symbol: string;
  status: string;
  message: string;
  orders: VenueOrder[];
}

/**
 * What every executing agent does, whatever its venue: receives its signals from the server,
 * queues each on its symbol's lane, writes each outcome to its journal before it acknowledges
 * it, sends the fills to the server's ledger, publishes its state, watches the day's loss, and
 * stops in order. How a signal is carried out is the kind's: on a venue elsewhere, whose reports
 * the book follows (RemoteVenueAgent), or on the simulated account that is the book
 * (SimulatedAgent).
 *
 * Restart-safe: the book and each signal's outcome are written in one atomic write before the
 * ack, so a redelivered signal is either found executed (acked again with the stored outcome)
 * or absent together with its effect.
 */
export abstract class ExecutingAgent<V extends Venue, O extends AgentOptions> {
  protected book!: VenueBook;
  protected readonly executed = new Map<string, ExecutedSignal>();
  protected agentId: string | null = null;
  protected journal!: Pick<AgentJournal<JournalRecord>, 'file' | 'save' | 'close'>;
  /** The day's entries' count at each journal snapshot not yet written, and the entries it carries. */
  private readonly riskMarks = new WeakMap<object, { mark: number; carried: CarriedEntries | null }>();
  /** The write of risk-days.json the entries counted since the last one wait for. */
  private riskSave: NodeJS.Timeout | null = null;
  /** Fills for the server's ledger not yet confirmed recorded, kept in the journal. */
  protected ledger = new LedgerOutbox(undefined);
  private ledgerSending = false;
  private ledgerRetry: NodeJS.Timeout | null = null;
  private ledgerGather: NodeJS.Timeout | null = null;
  private lock: LockFile | null = null;
  protected client: AgentClient | null = null;
  protected timers: NodeJS.Timeout[] = [];
  protected readonly stopping = new AbortController();
  /**
   * The work on the book: one lane per symbol (its signals and its part of a management pass, in
   * order), lanes side by side; account-wide work holds every lane while it runs (see work-lanes.ts).
   */
  protected readonly lanes: WorkLanes;
  /** Outcomes whose write is under way while their lane goes on: resolves true once on disk, false when the write failed. */
  protected readonly committing = new Map<string, Promise<boolean>>();
  protected fatal: Error | null = null;
  /** The entries of each day, its starting equity, the rules last seen and the halts asked for (kept on disk). */
  protected risk: RiskLedger | null = null;
  /** A loss watch is running: the timer's next one is skipped. */
  private watchingLoss = false;

  protected constructor(
    protected readonly options: O,
    protected readonly venue: V,
    private readonly kind: AgentKind,
  ) {
    this.lanes = new WorkLanes(kind.concurrentSignals);
  }

  /** Takes up the book and its journal in `dir`. False: the agent stopped meanwhile. */
  protected abstract open(dir: string): Promise<boolean>;
  /** Starts what brings the book its prices and the venue's news (timers go in `timers`). */
  protected abstract start(): void;
  /** Carries out a signal not executed before, writes its outcome down and acknowledges it. */
  protected abstract carryOut(signal: AgentSignal): Promise<void>;
  /** Publishes the state through the server link. */
  protected abstract publishTo(client: AgentClient): Promise<void>;
  /** The venue answered the last time it was asked: its funds are worth reading. */
  protected abstract reachable(): boolean;
  /** The venue's symbol for a canonical one, if it is known. */
  protected abstract venueSymbol(canonical: string): string | null;
  /** The journal as messages name it. */
  protected abstract journalName(): string;
  /** Queues the signals the last run left unfinished (the first of this run's work). */
  protected resumeInFlight(): void {}
  /** At a stop, before the server link closes and the journal's last write. */
  protected async beforeLastWrite(): Promise<void> {}
  /** At a stop, after the journal's last write. */
  protected async afterLastWrite(): Promise<void> {}

  /** Runs until `stop()` (resolves) or until the token is refused, the venue refuses the credentials or the disk fails (rejects). */
  async run(): Promise<void> {
    const { options } = this;
    const log = options.log;
    const client = new AgentClient({
      server: options.server,
      token: options.token,
      transport: options.transport,
      log,
      onStatus: (status) => {
        if (status.transport !== null && client.agent) this.agentId = client.agent.id;
        if (status.transport !== null) void this.publish();
      },
    });
    this.client = client;
    // The token first: a refused one must leave nothing on disk.
    try {
      this.agentId = (await client.identify()).id;
    } catch (err) {
      await client.close();
      if (err instanceof AgentClosedError) return;
      throw err;
    }
    const dir = path.join(
      options.dataDir,
      'agents',
      `agent-${createHash('sha256').update(options.token).digest('hex').slice(0, 16)}`,
    );
    try {
      try {
        createDirectory(dir, 0o700);
      } catch (error) {
        throw new Error(
          `cannot create ${this.kind.directoryOwner} directory ${dir} in SIGNALGATE_DATA_DIR=${options.dataDir}: ${(error as Error).message}; check that it is a directory this user can write, or set SIGNALGATE_DATA_DIR`,
          { cause: error },
        );
      }
      this.lock = LockFile.acquire(path.join(dir, 'agent.lock'), { ...AGENT, title: this.kind.lockTitle });
    } catch (err) {
      await client.close();
      throw err;
    }
    try {
      if (this.lock.tookOver) log.warn({ reason: this.lock.tookOver }, 'took over the lock of an agent that is gone');
      // As the server does: files made private stay so only until someone loosens them (or they
      // come from before this version), so each start names what others may read.
      for (const loose of looseModes(options.dataDir, { below: true })) {
        log.warn({ path: loose.path, mode: loose.mode }, loose.warning);
      }
      this.risk = await RiskLedger.open(path.join(dir, 'risk-days.json'));
      if (!(await this.open(dir))) return;
      void this.publish();
      void this.watchLoss();
      this.timers.push(setInterval(() => void this.watchLoss(), this.kind.publishEveryMs));
      this.timers.push(setInterval(() => void this.publish(), this.kind.publishEveryMs));
      this.start();
      // Outcomes stored but not yet acknowledged (the agent stopped in between): settle them
      // now, also for signals that expired meanwhile and will not be handed out again.
      for (const entry of this.executed.values()) if (!entry.acked) void this.acknowledge(entry);
      // Fills the last run did not see the server record: sent again (the server records each once).
      void this.sendLedger();
      this.resumeInFlight();
      await this.lanes.whenIdle();
      if (!this.fatal) {
        // Each signal goes to its symbol's lane without waiting for the earlier ones' outcome.
        for await (const signal of client.signals()) {
          if (this.fatal) break;
          this.dispatch(signal);
        }
      }
    } finally {
      await this.shutdown();
    }
    if (this.fatal) throw this.fatal;
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    if (this.ledgerRetry !== null) clearTimeout(this.ledgerRetry);
    if (this.ledgerGather !== null) clearTimeout(this.ledgerGather);
    await this.client?.close();
  }

  /**
   * Queues the signal on its symbol's lane: it is carried out after that symbol's earlier signals
   * and beside other symbols' ones. A failure that must stop the agent stops taking signals.
   */
  protected dispatch(signal: AgentSignal): void {
    // A flatten touches every symbol: it holds every lane.
    const work = () => this.handle(signal);
    (signal.flatten ? this.lanes.whole(work) : this.lanes.lane(this.laneOf(signal), work))
      .catch((error: unknown) => {
        this.fatal ??= error instanceof Error ? error : new Error(String(error));
      })
      .finally(() => {
        if (this.fatal) void this.client?.close();
      });
  }

  /** A signal's lane: the venue's symbol it trades, so two names of one market share a lane. */
  private laneOf(signal: AgentSignal): string {
    const canonical = canonicalSymbol(this.book.state.config.symbolMap, signal.signal.symbol);
    return this.venueSymbol(canonical) ?? canonical;
  }

  private async handle(signal: AgentSignal): Promise<void> {
    // The agent is stopping on a failure: left unacknowledged, handed out again after a restart.
    if (this.fatal) return;
    const known = this.executed.get(signal.id);
    if (known) {
      this.options.log.info(
        { signalId: signal.id, seq: signal.seq, status: known.outcome.status },
        'signal already executed; acknowledging it again',
      );
      void this.acknowledge(known);
      return;
    }
    await this.carryOut(signal);
  }

  /**
   * The signal's outcome, in memory: executed, its fills in the ledger's outbox (priced against
   * `receipt`, the quote the agent held when it took the signal) and its entries in the day's
   * (which the journal's writes carry until risk-days.json holds them), logged.
   */
  protected record(
    signal: AgentSignal,
    outcome: ExecutedSignal['outcome'],
    before: EngineState,
    receipt: Readonly<Record<string, Quote>>,
  ): ExecutedSignal {
    const log = this.options.log;
    const entry: ExecutedSignal = {
      id: signal.id,
      seq: signal.seq,
      executedAt: new Date().toISOString(),
      outcome,
      acked: false,
    };
    this.executed.set(signal.id, entry);
    const result = outcome.result as {
      events?: EngineEvent[];
      orders?: VenueOrder[];
      items?: { orders: VenueOrder[] }[];
    } | null;
    // A flatten's orders are per item.
    const orders = result?.orders ?? result?.items?.flatMap((item) => item.orders) ?? [];
    this.recordFills(before, this.book.state, result?.events ?? [], orders, signal.id, receipt);
    // A rejection or failure is something the trader must see: not at the level of routine lines.
    const level = outcome.status === 'executed' ? 'info' : outcome.status === 'rejected' ? 'warn' : 'error';
    log[level](
      {
        signalId: signal.id,
        seq: signal.seq,
        symbol: signal.signal.symbol,
        action: signal.signal.action,
        status: outcome.status,
        message: outcome.message,
      },
      'signal handled',
    );
    // The day's entries with the outcome (each journal write carries them until risk-days.json
    // holds them): a restart may count one twice, never miss one. A refusal sent nothing; a
    // failure may have sent its entry before a later step failed: counted.
    const entries = outcome.status === 'rejected' ? 0 : entriesOf(outcome.result);
    this.risk?.entered(signal.id, entries, Date.now());
    if (entries > 0) this.saveRiskSoon();
    return entry;
  }

  /** Writes the recorded outcome down, then acknowledges it. False: not written, the agent stops. */
  protected async commit(signal: AgentSignal, entry: ExecutedSignal): Promise<boolean> {
    try {
      await this.journal.save();
    } catch (err) {
      // Not on disk: acknowledging now could not survive a restart. Stop unacknowledged; the
      // server hands the signal out again and a restarted agent executes it on the stored book.
      this.fatal ??= new Error(`could not write ${this.journalName()}: ${(err as Error).message}`);
      void this.client?.close();
      return false;
    }
    // Not waited for: the outcome is on disk, so the next signal may be carried out while this
    // ack is on its way (a restart acks it again, never executes it again). By long-poll the
    // client asks for more only once every signal it handed over is acked, so a poll's signals
    // are acked together instead of one round trip each.
    void this.acknowledge(entry);
    void this.publish();
    this.sendLedgerSoon();
    if (signal.risk) void this.watchLoss();
    return true;
  }

  /**
   * The signal's risk rules as a check of each entry before it leaves (null: it carries none):
   * the positions are the book's at that point of the signal and `beside` (what the venue holds
   * that the book does not); equity and balance the venue's, read for this signal.
   */
  protected async guardFor(
    signal: AgentSignal,
    funds: VenueFunds,
    beside: readonly HeldPosition[],
  ): Promise<EntryGuard | null> {
    const rules = signal.risk;
    const risk = this.risk;
    if (!risk) return null;
    if (!rules) {
      // Rules removed through the API: the loss watch stops measuring them from this signal on.
      if (risk.forget(signal.sourceId)) await risk.save();
      return null;
    }
    const now = Date.now();
    const seen = risk.seen(signal.sourceId, rules);
    if (risk.observe(funds.equity, now) || seen) await risk.save();
    return {
      check: (entry) => {
        const at = Date.now();
        const violation = checkEntry(
          rules,
          {
            symbol: signal.signal.symbol,
            venueSymbol: entry.symbol,
            side: entry.side,
            lots: entry.lots,
            notional: entry.notional,
          },
          risk.facts(this.venue.netsPositions, [...entry.held, ...beside], funds.equity, funds.balance, at),
          at,
        );
        if (violation === null) risk.sendingEntry(signal.id, at);
        return violation;
      },
    };
  }

  /**
   * Every few seconds: the venue's equity read, as the start of a day that has none yet, and
   * against the loss rules last seen. Reached, the agent asks the server to halt the account
   * (once per rule and day, asked again until the server takes it); its own check refuses
   * entries while the loss stands. It closes nothing itself: a halt that flattens does.
   */
  private async watchLoss(): Promise<void> {
    const risk = this.risk;
    if (!risk || this.watchingLoss || this.stopping.signal.aborted || !this.reachable()) return;
    this.watchingLoss = true;
    try {
      let funds: VenueFunds;
      try {
        funds = await this.venue.funds();
      } catch {
        return; // unreachable or refused: the next watch reads again
      }
      const now = Date.now();
      if (risk.observe(funds.equity, now)) await risk.save();
      const breach = risk.breach(funds.equity, funds.balance, now);
      if (breach !== null) {
        const key = risk.haltKey(breach, now);
        if (risk.halt(key) === undefined) {
          risk.recordHalt(key, breach, now);
          await risk.save();
          this.options.log.error(
            { rule: breach.rule, limit: breach.limit, value: breach.value },
            `${breach.message}; entries are refused and the account is halted`,
          );
        }
      }
      await this.reportHalts();
    } catch (error) {
      this.options.log.warn({ err: (error as Error).message }, 'the loss watch failed; trying again');
    } finally {
      this.watchingLoss = false;
    }
  }

  /** Asks the server to halt for each loss rule reached and not yet taken: `POST /api/agent/halt`. */
  private async reportHalts(): Promise<void> {
    const risk = this.risk;
    const client = this.client;
    if (!risk || !client) return;
    for (const [key, halt] of risk.unreported()) {
      let status: number;
      try {
        status = (await client.halt({ rule: halt.rule, reason: halt.reason })).status;
      } catch (error) {
        this.options.log.warn(
          { rule: halt.rule, err: (error as Error).message },
          'could not ask the server to halt the account; asking again at the next watch',
        );
        return;
      }
      if (status >= 200 && status < 300) {
        risk.reported(key, Date.now());
        await risk.save();
        this.options.log.warn({ rule: halt.rule, reason: halt.reason }, 'the server halted the account');
      } else {
        this.options.log.warn(
          { rule: halt.rule, status },
          `the server answered ${status} to the halt (${status === 404 ? 'a server without halts' : 'refused'}); asking again at the next watch`,
        );
      }
    }
  }

  /** The symbols a flatten takes flat: every one the book holds a position or pending order of. */
  protected flattenSymbols(): string[] {
    const state = this.book.state;
    return [...new Set([...state.positions.map((p) => p.symbol), ...state.orders.map((o) => o.symbol)])].sort();
  }

  /** A flatten's outcome: executed when every item was and nothing remains, else failed with what did not. */
  protected flattened(
    signal: AgentSignal,
    items: FlattenItem[],
    remaining: { positions: readonly unknown[]; orders: readonly unknown[] },
  ): ExecutedSignal['outcome'] {
    const left = remaining.positions.length + remaining.orders.length;
    const failedItems = items.filter((item) => item.status !== 'executed');
    const result = { flatten: signal.flatten, items, remaining };
    this.options.log.warn({ reason: signal.flatten?.reason, items: items.length, left }, 'flattened the account');
    if (left === 0 && failedItems.length === 0)
      return {
        status: 'executed',
        message: `flattened (${signal.flatten?.reason ?? 'no reason given'}): ${items.length === 0 ? 'nothing was open' : items.map((i) => `${i.symbol}: ${i.message}`).join('; ')}`,
        result,
      };
    const named = [
      ...failedItems.map((i) => `${i.symbol}: ${i.message}`),
      ...(left > 0
        ? [`${remaining.positions.length} position(s) and ${remaining.orders.length} order(s) remain at the venue`]
        : []),
    ];
    return { status: 'failed', message: `the flatten did not finish: ${named.join('; ')}`, result };
  }

  /** The fills of one step of the book, into the outbox the next journal write keeps. */
  protected recordFills(
    before: EngineState,
    after: EngineState,
    events: readonly EngineEvent[],
    orders: readonly VenueOrder[],
    signalId: string | null,
    receipt?: Readonly<Record<string, Quote>>,
  ): void {
    try {
      const currency = after.config.currency;
      const fills = ledgerFillsOf({ before, after, events, orders, signalId, currency, ...(receipt && { receipt }) });
      this.ledger.add(fills);
    } catch (err) {
      // The ledger is a record of the book, never a reason to stop carrying signals out.
      this.options.log.error({ err: (err as Error).message }, 'could not take the fills for the ledger');
    }
  }

  /**
   * Sends the outbox's fills that are on disk to the server, a report at a time; what the server
   * did not take (unreachable) is tried again a few seconds later, and after a restart.
   */
  protected async sendLedger(): Promise<void> {
    const client = this.client;
    if (client === null || this.ledgerSending || this.stopping.signal.aborted) return;
    this.ledgerSending = true;
    try {
      while (true) {
        const report = this.ledger.next();
        if (report.fills.length + (report.funding?.length ?? 0) + (report.busts?.length ?? 0) === 0) break;
        const answer = await client.reportFills(report);
        if (answer === 'later') {
          if (this.ledgerRetry === null && !this.stopping.signal.aborted) {
            this.ledgerRetry = setTimeout(() => {
              this.ledgerRetry = null;
              void this.sendLedger();
            }, LEDGER_RETRY_MS);
            this.ledgerRetry.unref();
          }
          break;
        }
        this.ledger.confirmed(report);
      }
    } finally {
      this.ledgerSending = false;
    }
    // Confirmed entries leave the journal at its next write (the next outcome, fill or stop), not
    // at a write of their own: one read again after a restart is sent again, and the server
    // records each once.
  }

  /**
   * The ledger's report a little later (LEDGER_GATHER_MS): a signal's fills are not needed at
   * once, and a report per signal cost the agent and the server a request each. Fills left
   * unsent at a stop are in the journal and sent at the next start.
   */
  private sendLedgerSoon(): void {
    if (this.ledgerGather !== null || this.stopping.signal.aborted) return;
    this.ledgerGather = setTimeout(() => {
      this.ledgerGather = null;
      void this.sendLedger();
    }, LEDGER_GATHER_MS);
    this.ledgerGather.unref();
  }

  protected async acknowledge(entry: ExecutedSignal): Promise<void> {
    const client = this.client;
    if (!client) return;
    // A redelivery that overtook the write of its outcome: acknowledged once that is on disk.
    const writing = this.committing.get(entry.id);
    if (writing !== undefined && !(await writing)) return;
    try {
      const answer = await client.ack(entry.id, entry.outcome);
      if (!answer.ok)
        this.options.log.warn(
          { signalId: entry.id, status: answer.status, problem: answer.problem },
          'the server refused the acknowledgement',
        );
      entry.acked = true;
      forgetSettled(this.executed);
    } catch (err) {
      if (!(err instanceof AgentClosedError))
        this.options.log.error({ signalId: entry.id, err: (err as Error).message }, 'acknowledgement failed');
    }
  }

  protected async publish(): Promise<void> {
    const client = this.client;
    if (!client || !this.book) return;
    await this.publishTo(client);
  }

  private async shutdown(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    if (this.riskSave !== null) clearTimeout(this.riskSave);
    // What the lanes still carry out ends at its next wait for the venue (stopping), or finishes;
    // a venue request that hangs is not waited for beyond the grace: what it belongs to is in
    // flight in the journal, and the next start looks it up at the venue and finishes it.
    let grace: NodeJS.Timeout | undefined;
    const idle = await Promise.race([
      this.lanes.whenIdle().then(() => true),
      new Promise<boolean>((resolve) => (grace = setTimeout(() => resolve(false), SHUTDOWN_GRACE_MS))),
    ]);
    clearTimeout(grace);
    // Outcomes being written are acknowledged once on disk, before the connection closes.
    await Promise.all(this.committing.values());
    if (!idle)
      this.options.log.warn(
        { graceMs: SHUTDOWN_GRACE_MS },
        'stopping while a venue request is still unanswered; the next start finishes its signal from the journal',
      );
    await this.beforeLastWrite();
    await this.client?.close();
    try {
      if (this.journal) {
        await this.journal.save();
        await this.journal.close();
      }
      // The entries the journal's last write carried, so the next start finds the file whole.
      await this.risk?.save();
      await this.risk?.close();
    } catch (err) {
      this.options.log.error(
        { err: (err as Error).message },
        `could not write ${this.journal ? this.journalName() : 'the journal'} on shutdown`,
      );
    }
    await this.afterLastWrite();
    this.lock?.release();
  }

  /**
   * risk-days.json written within RISK_SAVE_AFTER_MS of an entry, not before each ack: meanwhile
   * each journal write carries the entries it lacks, so a signal costs one file write, not two.
   */
  private saveRiskSoon(): void {
    if (this.riskSave !== null || !this.risk) return;
    this.riskSave = setTimeout(() => {
      this.riskSave = null;
      this.risk
        ?.save()
        .catch((err: Error) =>
          this.options.log.error(
            { err: err.message },
            'could not write risk-days.json; the journal carries the entries it lacks, trying again at the next entry',
          ),
        );
    }, RISK_SAVE_AFTER_MS);
  }

  /**
   * At a start, before the journal's first write: the entries the stored journal carried (written
   * with their outcomes before risk-days.json held them) counted where the file lacks them, then
   * the file written.
   */
  protected async takeCarriedEntries(file: string, stored: unknown): Promise<void> {
    const carried = (stored as { riskEntries?: unknown } | null)?.riskEntries;
    if (carried === undefined || !this.risk) return;
    const valid =
      typeof carried === 'object' &&
      carried !== null &&
      Object.values(carried).every(
        (e) => Array.isArray(e) && e.length === 2 && Number.isFinite(e[0]) && Number.isInteger(e[1]) && e[1] > 0,
      );
    if (!valid)
      throw new Error(
        `${file}: riskEntries is not {signalId: [epoch ms, count]}; restore the file from a backup, or remove riskEntries (the day's entries it held are then not counted)`,
      );
    if (this.risk.carriedOver(carried as CarriedEntries, Date.now())) await this.risk.save();
  }

  /** A journal snapshot, carrying the entries risk-days.json lacks, with where the day's entries stood (see `journalWritten`). */
  protected journalSnapshot<T extends object>(fields: T): T & { riskEntries?: CarriedEntries } {
    if (!this.risk) return fields;
    const carried = this.risk.unwritten();
    const snapshot = carried === null ? fields : { ...fields, riskEntries: carried };
    this.riskMarks.set(snapshot, { mark: this.risk.mark(), carried });
    return snapshot;
  }

  /**
   * A journal snapshot is on disk: the outcomes of the signals counted before it are in the
   * journal, so the day's entries no longer need those signals' ids, save those it carried.
   */
  protected journalWritten(fields: object): void {
    const taken = this.riskMarks.get(fields);
    if (taken !== undefined) this.risk?.journaled(taken.mark, taken.carried);
  }
}

/** The entries a signal's outcome sent (market openings and pending entries placed). */
function entriesOf(result: unknown): number {
  const events = (result as { events?: { type?: string }[] } | null)?.events;
  if (!Array.isArray(events)) return 0;
  return events.filter((e) => e.type === 'opened' || e.type === 'order_placed').length;
}
