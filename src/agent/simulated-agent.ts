import path from 'node:path';
import { applyTick, canonicalSymbol, type EngineState, type Tick } from '../engine/index.js';
import { renderSignalText } from '../language/index.js';
import type { AgentSignal } from '../protocol/agent-signal.js';
import type { AgentClient } from './agent-client.js';
import { AgentJournal } from './agent-journal.js';
import { ExecutingAgent, type AgentOptions, type FlattenItem } from './executing-agent.js';
import { LedgerOutbox, type LedgerOutboxRecord } from './ledger-outbox.js';
import { executedJson, type ExecutedSignal } from './executed-signal.js';
import { emptyLinks } from './venue-book.js';
import { executeSignal } from './venue-execution.js';
import type { SimulatedVenue } from './simulated-venue.js';
import { OrderTiming } from './order-timing.js';
import { entriesOnly, entryDeadline, type EntryDeadline } from './signal-age.js';

/** A simulated account's equity moves with every tick of its feed and costs nothing to read: published often. */
const PUBLISH_EVERY_MS = 5000;
/** The simulation executes one signal at a time anyway: its lanes overlap only in writing and acknowledging. */
const CONCURRENT_SIGNALS = 64;

export interface SimulatedAgentOptions extends AgentOptions {
  venue: SimulatedVenue;
}

/**
 * The agent on a simulated account (paper): the venue is the engine's own simulation, so the
 * book is the account. Nothing stands anywhere else: nothing to reconcile at start, to look up
 * again after a restart or to read before a signal. Prices come as ticks from the venue's feed
 * and the engine fills, stops and moves on the book itself. Each outcome is recorded in the same
 * step as its effect on the book and written while the lane goes on (see `commitLater`).
 */
export class SimulatedAgent extends ExecutingAgent<SimulatedVenue, SimulatedAgentOptions> {
  /** The simulated account's executions, one after another (each reads and replaces the whole book). */
  private simulating: Promise<unknown> = Promise.resolve();

  constructor(options: SimulatedAgentOptions) {
    const venue = options.venue;
    super(options, venue, {
      concurrentSignals: venue.concurrentSignals ?? CONCURRENT_SIGNALS,
      publishEveryMs: PUBLISH_EVERY_MS,
      lockTitle: `signalgate ${venue.name} agent`,
      directoryOwner: `the ${venue.accountName}'s`,
    });
  }

  /** Takes up the simulated account from its file (or a new one): there is nothing elsewhere to reconcile. */
  protected async open(dir: string): Promise<boolean> {
    const sim = this.venue;
    const file = path.join(dir, sim.journal.name);
    const stored = await AgentJournal.load(file, sim.journal.format);
    const restored = sim.restore(stored, file, () => this.book.state);
    await this.takeCarriedEntries(file, stored);
    this.book = emptyLinks(restored.state);
    this.agentId ??= restored.agentId;
    for (const entry of restored.executed) this.executed.set(entry.id, entry);
    this.ledger = new LedgerOutbox((stored as { ledger?: LedgerOutboxRecord } | null)?.ledger);
    this.journal = new AgentJournal(
      file,
      () => {
        const executed = [...this.executed.values()];
        // The venue's record, with the executed signals as ready JSON (the file's largest part).
        return this.journalSnapshot({
          ...sim.record({ agentId: this.agentId, state: this.book.state, executed }),
          executed: executedJson(executed),
          ledger: this.ledger.record(),
        });
      },
      (written) => {
        this.journalWritten(written);
        this.ledger.written((written as { ledger: LedgerOutboxRecord }).ledger);
      },
    );
    const { state } = this.book;
    this.options.log.info(
      {
        file,
        balance: state.balance,
        currency: state.config.currency,
        executed: this.executed.size,
        resumed: stored !== null,
      },
      `${sim.accountName} ready`,
    );
    return true;
  }

  /** The venue's feed brings its ticks. */
  protected start(): void {
    this.venue.start((tick) => this.onTick(tick));
  }

  protected async carryOut(signal: AgentSignal): Promise<void> {
    const before = this.book.state;
    if (signal.flatten) {
      const run = this.simulating.then(() => this.flatten(signal));
      this.simulating = run.catch(() => undefined);
      const outcome = await run;
      await this.commit(signal, this.record(signal, outcome, before, before.quotes));
      return;
    }
    const unpriced = this.venue.unpriced(signal.signal.symbol);
    const deadline = entryDeadline(signal.expiresAt, Date.now, () => null);
    const expired = entriesOnly(signal.signal) ? deadline.refusal(`its ${signal.signal.action} order`) : null;
    let outcome: ExecutedSignal['outcome'];
    if (expired !== null) {
      outcome = { status: 'rejected', message: expired, result: null };
    } else if (unpriced !== null) {
      outcome = { status: 'rejected', message: unpriced, result: null };
    } else {
      // The outcome is recorded in the same step as its effect on the book, so no journal write
      // holds one without the other; the lane goes on while it is written.
      const run = this.simulating.then(async () => {
        const from = this.book.state;
        const done = await this.simulate(signal, deadline);
        if (done.state !== null) this.book = emptyLinks(done.state);
        return this.record(signal, done.outcome, from, from.quotes);
      });
      this.simulating = run.catch(() => undefined);
      this.commitLater(signal, await run);
      return;
    }
    this.commitLater(signal, this.record(signal, outcome, before, before.quotes));
  }

  /**
   * The outcome is written while its lane goes on: nothing of it stands anywhere but in the
   * book, so the next signal may run on the book before the write (a crash loses both,
   * unacknowledged, and the server hands them out again). Each write takes every outcome
   * recorded before it starts, at most one write waits behind the one under way, and each ack
   * waits for the write that holds its outcome.
   */
  private commitLater(signal: AgentSignal, entry: ExecutedSignal): void {
    const written = this.commit(signal, entry);
    this.committing.set(entry.id, written);
    void written.finally(() => {
      if (this.committing.get(entry.id) === written) this.committing.delete(entry.id);
    });
  }

  /** Executes the signal on the simulated account, whose instruments, quotes and balance the book holds already. */
  private async simulate(
    signal: AgentSignal,
    deadline: EntryDeadline,
  ): Promise<{ outcome: ExecutedSignal['outcome']; state: EngineState | null }> {
    try {
      // The simulation holds the stops and targets itself: the book keeps no venue orders for them.
      const timing = new OrderTiming(this.venue);
      const guard = await this.guardFor(signal, await this.venue.funds(), []);
      const done = await executeSignal(
        timing.venue,
        emptyLinks(this.book.state),
        { id: signal.id, signal: signal.signal, text: renderSignalText(signal.signal) },
        Date.now(),
        false,
        deadline,
        guard,
      );
      return { outcome: { ...done.outcome, timings: timing.result() }, state: done.book.state };
    } catch (err) {
      return {
        outcome: {
          status: 'failed',
          message: `the ${this.venue.name} engine failed: ${(err as Error).message}`,
          result: null,
        },
        state: null,
      };
    }
  }

  /** A flatten: each symbol the account holds taken flat (positionflat) by the engine. */
  private async flatten(signal: AgentSignal): Promise<ExecutedSignal['outcome']> {
    const items: FlattenItem[] = [];
    for (const symbol of this.flattenSymbols()) {
      const canonical = canonicalSymbol(this.book.state.config.symbolMap, symbol);
      const done = await executeSignal(
        this.venue,
        emptyLinks(this.book.state),
        {
          id: `${signal.id}/${symbol}`,
          signal: { symbol: canonical, action: 'positionflat' },
          text: `${canonical},positionflat`,
        },
        Date.now(),
        false,
      );
      this.book = emptyLinks(done.book.state);
      items.push({
        symbol,
        status: done.outcome.status,
        message: done.outcome.message,
        orders: done.outcome.result?.orders ?? [],
      });
    }
    return this.flattened(signal, items, { positions: this.book.state.positions, orders: this.book.state.orders });
  }

  /** A tick of the feed: the engine fills, stops and moves on the book itself. */
  private onTick(tick: Tick): void {
    const log = this.options.log;
    let step;
    try {
      step = applyTick(this.book.state, tick, this.venue.fills);
    } catch (err) {
      log.warn({ tick, err: (err as Error).message }, 'tick ignored');
      return;
    }
    const before = this.book.state;
    this.book = { ...this.book, state: step.state };
    if (step.events.length === 0) return;
    for (const event of step.events) log.info({ event }, 'account event');
    this.recordFills(before, step.state, step.events, [], null);
    this.journal
      .save()
      .then(() => this.sendLedger())
      .catch((err: Error) => log.error({ err: err.message }, `could not write ${this.journalName()}`));
    void this.publish();
  }

  protected async publishTo(client: AgentClient): Promise<void> {
    // Made when sent: a signal publishes, and of a sustained rate's snapshots most were made for nothing.
    await client.publishState(() => this.venue.published(Date.now()));
  }

  /** The account is the book: it always answers. */
  protected reachable(): boolean {
    return true;
  }

  protected venueSymbol(canonical: string): string | null {
    return this.book.state.config.symbolMap.toBroker[canonical] ?? null;
  }

  protected journalName(): string {
    return `the ${this.venue.accountName}`;
  }

  /** The feed first: no tick changes the account after its last write. */
  protected override async beforeLastWrite(): Promise<void> {
    await this.venue.shutdown().catch(() => undefined);
  }
}
