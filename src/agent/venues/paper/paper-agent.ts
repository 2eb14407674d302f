import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Logger } from 'pino';
import {
  applyTick,
  brokerSymbol,
  canonicalSymbol,
  createEngineState,
  resolveSignalSymbol,
  summarize,
  type EngineState,
  type InstrumentsFile,
  type Quote,
  type Tick,
} from '../../../engine/index.js';
import { renderSignalText } from '../../../language/index.js';
import { LockFile, type LockRole } from '../../../process/lock-file.js';
import { createDirectory } from '../../../files/create-directory.js';
import { AgentClient, type AgentSignal, type TransportChoice } from '../../agent-client.js';
import { AgentClosedError } from '../../agent-errors.js';
import { emptyLinks } from '../../venue-book.js';
import { executeSignal } from '../../venue-execution.js';
import { unpriceable } from './feed-currencies.js';
import { PaperVenue } from './paper-venue.js';
import { type ExecutedSignal, forgetSettled } from '../../executed-signal.js';
import { type PaperBook, PaperJournal } from './paper-journal.js';
import type { PriceFeed } from './price-feed.js';
import { RandomWalkFeed } from './random-walk-feed.js';
import { StoredAccountConflictError } from './stored-account-conflict.js';
import { TickFileFeed, type TicksFile } from './tick-file-feed.js';

/** The snapshot is published after every change and at least this often (equity moves with prices). */
const PUBLISH_EVERY_MS = 5000;

/**
 * One paper agent per account directory: two processes executing into the same file would each
 * overwrite the other's account.
 */
const PAPER_AGENT: LockRole = {
  name: 'agent',
  title: 'signalgate paper agent',
  place: 'on the same account',
  runsAs: (args) => args.includes('agent') && (args.includes('--paper') || args.includes('--venue=paper') || args.some((arg, i) => arg === '--venue' && args[i + 1] === 'paper')),
};

export interface PaperAgentOptions {
  server: string;
  token: string;
  transport: TransportChoice;
  /** `SIGNALGATE_DATA_DIR`: the account lives under `<dataDir>/agents/<token digest>/`. */
  dataDir: string;
  /** Balance and currency of a new account (the flags' or the defaults). */
  balance: number;
  currency: string;
  /** Which of the two the flags gave: a restart warns when a given one differs from the stored account. */
  given: { balance: boolean; currency: boolean };
  /** The account currencies the feed can price (see feed-currencies.ts). */
  currencies: readonly string[];
  defaultVolumeLots: number | null;
  instruments: InstrumentsFile;
  /** The `--instruments` file (absolute path), for messages; null: none given. */
  instrumentsFile: string | null;
  /** Ticks to replay in real time (sorted by time); null: the random walk. */
  ticks: TicksFile | null;
  /** Random-walk seed; null: random. Ignored when continuing a stored walk. */
  seed: number | null;
  log: Logger;
}

/**
 * The paper-trading agent (CONTRACT §7): executes its signals with the engine on a simulated
 * account fed by a random walk or a ticks file, keeps the account and each executed signal's
 * outcome on disk before acknowledging it, and publishes the account snapshot.
 *
 * Restart safety: a signal's effect and its outcome are written in one atomic file write
 * before the ack, so after a crash a redelivered signal is either found in the file (acked
 * again with the stored outcome, not executed again) or absent together with its effect
 * (executed now, for the first time).
 */
export class PaperAgent {
  private state!: EngineState;
  private readonly executed = new Map<string, ExecutedSignal>();
  private agentId: string | null = null;
  private feed!: PriceFeed;
  private journal!: PaperJournal;
  private lock: LockFile | null = null;
  private client: AgentClient | null = null;
  private publishTimer: NodeJS.Timeout | null = null;
  private fatal: Error | null = null;
  /** The simulated account as the venue the engine's decisions are carried out on. */
  private readonly venue = new PaperVenue(() => this.state);

  constructor(private readonly options: PaperAgentOptions) {}

  /** Runs until `stop()` (resolves) or until the token is refused or the disk fails (rejects). */
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
    // The token first: a refused one must leave nothing on disk (no directory, no account file).
    try {
      this.agentId = (await client.identify()).id;
    } catch (err) {
      await client.close();
      if (err instanceof AgentClosedError) return;
      throw err;
    }
    const dir = path.join(options.dataDir, 'agents', `agent-${createHash('sha256').update(options.token).digest('hex').slice(0, 16)}`);
    try {
      try {
        createDirectory(dir, 0o700);
      } catch (error) {
        throw new Error(
          `cannot create the paper account's directory ${dir} in SIGNALGATE_DATA_DIR=${options.dataDir}: ${(error as Error).message}; check that it is a directory this user can write, or set SIGNALGATE_DATA_DIR`,
          { cause: error },
        );
      }
      this.lock = LockFile.acquire(path.join(dir, 'agent.lock'), PAPER_AGENT);
    } catch (err) {
      await client.close();
      throw err;
    }
    try {
      if (this.lock.tookOver) log.warn({ reason: this.lock.tookOver }, 'took over the lock of an agent that is gone');
      const file = path.join(dir, 'paper-account.json');
      const book = await PaperJournal.load(file);
      this.restore(book, file);
      this.journal = new PaperJournal(file, () => ({
        agentId: this.agentId,
        engine: this.state,
        executed: [...this.executed.values()],
        feed: this.feed.position(),
        instrumentsFile: options.instrumentsFile,
      }));
      log.info(
        { file, balance: this.state.balance, currency: this.state.config.currency, executed: this.executed.size, resumed: book !== null },
        'paper account ready',
      );
      this.feed.start((tick) => this.onTick(tick));
      this.publishTimer = setInterval(() => void this.publish(), PUBLISH_EVERY_MS);
      // Outcomes stored but not yet acknowledged (the agent stopped in between): settle them
      // now, also for signals that expired meanwhile and will not be handed out again.
      for (const entry of this.executed.values()) if (!entry.acked) void this.acknowledge(entry);
      for await (const signal of client.signals()) {
        await this.handle(signal);
        if (this.fatal) break;
      }
    } finally {
      await this.shutdown();
    }
    if (this.fatal) throw this.fatal;
  }

  async stop(): Promise<void> {
    await this.client?.close();
  }

  /**
   * Takes up the stored account (or a new one) and the feed. Throws StoredAccountConflictError
   * when this run's flags contradict the stored account in a way that would trade at prices
   * or on positions the account never had.
   */
  private restore(book: PaperBook | null, file: string): void {
    const { options } = this;
    const log = options.log;
    // The feed first: with another feed, whatever else differs follows from it.
    const resumeAt = book ? this.resumedTicks(book, file) : 0;
    const currency = book?.engine.config.currency ?? options.currency;
    if (!options.currencies.includes(currency)) {
      const why = unpriceable(options.currencies, options.ticks?.file ?? null);
      throw new StoredAccountConflictError(
        book
          ? `the paper account in ${file} is in ${currency}, but ${why}: start a new account with a fresh SIGNALGATE_DATA_DIR and a --currency the feed prices`
          : `--currency ${currency}${options.given.currency ? '' : ' (the default)'}: ${why}; give --currency with one it prices`,
      );
    }
    const fresh = createEngineState({
      balance: options.balance,
      currency,
      instruments: options.instruments.instruments,
      symbolMap: options.instruments.symbolMap,
      defaultVolumeLots: options.defaultVolumeLots,
    });
    this.state = book ? this.resumeAccount(book, file, fresh.config) : fresh;
    this.agentId ??= book?.agentId ?? null;
    for (const entry of book?.executed ?? []) this.executed.set(entry.id, entry);
    if (options.ticks !== null) {
      this.feed = new TickFileFeed(options.ticks, resumeAt, () => log.info({ file: options.ticks?.file }, 'the ticks file is played out; prices stay where they are'));
    } else {
      const stored = book?.feed?.kind === 'random-walk' ? book.feed.randomState : null;
      const seed = stored ?? options.seed ?? Math.floor(Math.random() * 2 ** 32);
      const last = new Map<string, Quote>();
      for (const [symbol, quote] of Object.entries(this.state.quotes)) {
        last.set(canonicalSymbol(this.state.config.symbolMap, symbol), quote);
      }
      this.feed = new RandomWalkFeed(seed, last);
    }
  }

  /**
   * The stored account (balance, currency, positions, orders) under this run's instruments.
   * Positions and orders are kept under their broker symbols, so another symbol map (or other
   * overrides) would leave them unmanaged or mispriced: refused while any are open.
   */
  private resumeAccount(book: PaperBook, file: string, config: EngineState['config']): EngineState {
    const { options } = this;
    const log = options.log;
    const stored = book.engine;
    const keep = 'the stored value is kept (--balance and --currency only apply to a new account; to start afresh, use a fresh SIGNALGATE_DATA_DIR)';
    if (options.given.balance && options.balance !== stored.balance) {
      log.warn({ file, stored: stored.balance, flag: options.balance }, `--balance ${options.balance} differs from the stored balance ${stored.balance}: ${keep}`);
    }
    if (options.given.currency && options.currency !== stored.config.currency) {
      log.warn({ file, stored: stored.config.currency, flag: options.currency }, `--currency ${options.currency} differs from the stored currency ${stored.config.currency}: ${keep}`);
    }
    if (sameInstruments(stored.config, config)) return { ...stored, config };
    const open = [...stored.positions.map((p) => p.symbol), ...stored.orders.map((o) => o.symbol)];
    const was = `${describeInstruments(stored.config)}${book.instrumentsFile === undefined ? '' : book.instrumentsFile === null ? ', without --instruments' : ` from ${book.instrumentsFile}`}`;
    const now = `${describeInstruments(config)}${options.instrumentsFile === null ? ', without --instruments' : ` from ${options.instrumentsFile}`}`;
    if (open.length > 0) {
      throw new StoredAccountConflictError(
        `the paper account in ${file} has ${open.length} open position(s) or order(s) on ${[...new Set(open)].join(', ')} made with ${was}, but this run has ${now}: ` +
          'they would no longer be managed as they were opened. Restart with the instruments file they were opened with (close them first to change it), ' +
          'or start a new paper account with a fresh SIGNALGATE_DATA_DIR',
      );
    }
    log.info({ file, was, now }, 'the instruments changed since the last run; no position or order is open, so this run\'s apply');
    // The last quotes move to the names this run quotes them under.
    const quotes: Record<string, Quote> = {};
    for (const [symbol, quote] of Object.entries(stored.quotes)) {
      quotes[brokerSymbol(config.symbolMap, canonicalSymbol(stored.config.symbolMap, symbol))] = quote;
    }
    return { ...stored, config, quotes };
  }

  /** How many ticks of this run's file were already applied; throws when the stored feed is another one. */
  private resumedTicks(book: PaperBook, file: string): number {
    const ticks = this.options.ticks;
    const feed = book.feed;
    const fresh = 'or start a new paper account with a fresh SIGNALGATE_DATA_DIR';
    if (feed === null) return 0;
    if (feed.kind === 'random-walk') {
      if (ticks === null) return 0;
      throw new StoredAccountConflictError(
        `the paper account in ${file} trades on the random walk, and --ticks ${ticks.file} would replace its prices: restart without --ticks, ${fresh} for the ticks file`,
      );
    }
    if (feed.sha256 === undefined) {
      throw new StoredAccountConflictError(
        `the paper account in ${file} was replaying a ticks file (${feed.applied} ticks applied) but does not record which one, so it cannot resume safely: ${fresh.replace(/^or s/, 'S')}`,
      );
    }
    const was = `${feed.file} (sha256 ${feed.sha256.slice(0, 12)}…, ${feed.applied} ticks applied)`;
    if (ticks === null) {
      throw new StoredAccountConflictError(
        `the paper account in ${file} was replaying ${was}; without --ticks it would switch to the random walk: restart with --ticks ${feed.file}, ${fresh}`,
      );
    }
    if (ticks.sha256 !== feed.sha256) {
      throw new StoredAccountConflictError(
        `the paper account in ${file} was replaying ${was}, and --ticks ${ticks.file} (sha256 ${ticks.sha256.slice(0, 12)}…) is a different file, in which that count means nothing: ` +
          `restart with the same file, ${fresh} for the new one`,
      );
    }
    return feed.applied;
  }

  private async handle(signal: AgentSignal): Promise<void> {
    const log = this.options.log;
    const known = this.executed.get(signal.id);
    if (known) {
      log.info({ signalId: signal.id, seq: signal.seq, status: known.outcome.status }, 'signal already executed; acknowledging it again');
      await this.acknowledge(known);
      return;
    }
    const now = Date.now();
    let outcome: ExecutedSignal['outcome'];
    if (now > Date.parse(signal.expiresAt)) {
      // Handed out in time but reached only now (a backlog): a late order is worse than none.
      outcome = { status: 'rejected', message: `the signal expired at ${signal.expiresAt} before the agent could execute it`, result: null };
    } else if (!this.priced(signal.signal.symbol)) {
      outcome = { status: 'rejected', message: this.notInFeed(signal.signal.symbol), result: null };
    } else {
      try {
        const done = await executeSignal(this.venue, emptyLinks(this.state), { id: signal.id, signal: signal.signal, text: renderSignalText(signal.signal) }, now);
        this.state = done.book.state;
        outcome = done.outcome;
      } catch (err) {
        outcome = { status: 'failed', message: `the paper engine failed: ${(err as Error).message}`, result: null };
      }
    }
    const entry: ExecutedSignal = { id: signal.id, seq: signal.seq, executedAt: new Date(now).toISOString(), outcome, acked: false };
    this.executed.set(signal.id, entry);
    // A rejection or failure is something the trader must see: not at the level of routine lines.
    const level = outcome.status === 'executed' ? 'info' : outcome.status === 'rejected' ? 'warn' : 'error';
    log[level]({ signalId: signal.id, seq: signal.seq, symbol: signal.signal.symbol, action: signal.signal.action, status: outcome.status, message: outcome.message }, 'signal handled');
    try {
      await this.journal.save();
    } catch (err) {
      // Not on disk: acknowledging now could not survive a restart. Stop unacknowledged; the
      // server hands the signal out again and a restarted agent executes it on the stored account.
      this.fatal = new Error(`could not write the paper account: ${(err as Error).message}`);
      return;
    }
    await this.acknowledge(entry);
    void this.publish();
  }

  /** Whether the feed ever quotes the symbol (compared by canonical name, through the symbol map). */
  private priced(symbol: string): boolean {
    const map = this.state.config.symbolMap;
    const wanted = resolveSignalSymbol(map, symbol);
    // A symbol that does not resolve is the engine's to reject, with its reason.
    if (!wanted.ok) return true;
    // Compared as venue symbols: two tickers may name the one the feed quotes.
    const venue = (name: string) => brokerSymbol(map, canonicalSymbol(map, name)).toUpperCase();
    return this.feed.symbols.some((quoted) => venue(quoted) === venue(wanted.canonical));
  }

  /** Not "no price yet": the feed will never price it, so say what it does price. */
  private notInFeed(symbol: string): string {
    const map = this.state.config.symbolMap;
    const quoted = [...new Set(this.feed.symbols.map((s) => canonicalSymbol(map, s)))].sort();
    const wanted = resolveSignalSymbol(map, symbol);
    return `${wanted.ok ? wanted.canonical : symbol} is not in the paper feed: ${this.feed.description} prices only ${quoted.join(', ')}; send one of those, or give --ticks a file with prices for it`;
  }

  private async acknowledge(entry: ExecutedSignal): Promise<void> {
    const client = this.client;
    if (!client) return;
    try {
      const answer = await client.ack(entry.id, entry.outcome);
      if (!answer.ok) {
        this.options.log.warn({ signalId: entry.id, status: answer.status, problem: answer.problem }, 'the server refused the acknowledgement');
      }
      entry.acked = true;
      forgetSettled(this.executed);
    } catch (err) {
      if (!(err instanceof AgentClosedError)) this.options.log.error({ signalId: entry.id, err: (err as Error).message }, 'acknowledgement failed');
    }
  }

  private onTick(tick: Tick): void {
    let events;
    try {
      ({ state: this.state, events } = applyTick(this.state, tick, this.venue.fills));
    } catch (err) {
      this.options.log.warn({ tick, err: (err as Error).message }, 'tick ignored');
      return;
    }
    if (events.length === 0) return;
    for (const event of events) this.options.log.info({ event }, 'account event');
    this.journal.save().catch((err: Error) => this.options.log.error({ err: err.message }, 'could not write the paper account'));
    void this.publish();
  }

  private async publish(): Promise<void> {
    const client = this.client;
    if (!client) return;
    const { type: _type, time, ...account } = summarize(this.state, Date.now());
    await client.publishState({ ...account, updatedAt: new Date(time).toISOString(), paper: true });
  }

  private async shutdown(): Promise<void> {
    if (this.publishTimer) clearInterval(this.publishTimer);
    this.feed?.stop();
    await this.client?.close();
    try {
      if (this.journal) await this.journal.save();
    } catch (err) {
      this.options.log.error({ err: (err as Error).message }, 'could not write the paper account on shutdown');
    }
    this.lock?.release();
  }
}

/** Same symbol map and instrument overrides, whatever the order of their keys. */
function sameInstruments(a: EngineState['config'], b: EngineState['config']): boolean {
  return sortedJson({ map: a.symbolMap.toBroker, instruments: a.instruments }) === sortedJson({ map: b.symbolMap.toBroker, instruments: b.instruments });
}

function sortedJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : 1))) : v,
  );
}

/** `symbol map EURUSD→EURUSD.m, overrides for XAUUSD`, for messages. */
function describeInstruments(config: EngineState['config']): string {
  const map = Object.entries(config.symbolMap.toBroker).map(([canonical, broker]) => `${canonical}→${broker}`);
  const overrides = Object.keys(config.instruments);
  return `${map.length ? `symbol map ${map.join(', ')}` : 'no symbol map'}${overrides.length ? `, overrides for ${overrides.join(', ')}` : ''}`;
}
