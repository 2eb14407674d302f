import type { Logger } from 'pino';
import {
  brokerSymbol,
  canonicalSymbol,
  createEngineState,
  type EngineState,
  type InstrumentsFile,
  type Quote,
} from '../../../engine/index.js';
import { unpriceable } from './feed-currencies.js';
import type { PaperBook } from './paper-journal.js';
import type { PriceFeed } from './price-feed.js';
import { RandomWalkFeed } from './random-walk-feed.js';
import { StoredAccountConflictError } from './stored-account-conflict.js';
import { TickFileFeed, type TicksFile } from './tick-file-feed.js';

/** What the flags decide about the paper account and its feed. */
export interface PaperAccountSettings {
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
}

/**
 * Takes up the stored account (or a new one) and its feed. Throws StoredAccountConflictError
 * when this run's flags contradict the stored account in a way that would trade at prices
 * or on positions the account never had.
 */
export function resumePaperAccount(
  book: PaperBook | null,
  file: string,
  settings: PaperAccountSettings,
  log: Logger,
): { state: EngineState; feed: PriceFeed } {
  // The feed first: with another feed, whatever else differs follows from it.
  const resumeAt = book ? resumedTicks(book, file, settings) : 0;
  const currency = book?.engine.config.currency ?? settings.currency;
  if (!settings.currencies.includes(currency)) {
    const why = unpriceable(settings.currencies, settings.ticks?.file ?? null);
    throw new StoredAccountConflictError(
      book
        ? `the paper account in ${file} is in ${currency}, but ${why}: start a new account with a fresh SIGNALGATE_DATA_DIR and a --currency the feed prices`
        : `--currency ${currency}${settings.given.currency ? '' : ' (the default)'}: ${why}; give --currency with one it prices`,
    );
  }
  const fresh = createEngineState({
    balance: settings.balance,
    currency,
    instruments: settings.instruments.instruments,
    symbolMap: settings.instruments.symbolMap,
    defaultVolumeLots: settings.defaultVolumeLots,
  });
  const state = book ? resumeAccount(book, file, fresh.config, settings, log) : fresh;
  const ticks = settings.ticks;
  if (ticks !== null) {
    return {
      state,
      feed: new TickFileFeed(ticks, resumeAt, () =>
        log.info({ file: ticks.file }, 'the ticks file is played out; prices stay where they are'),
      ),
    };
  }
  const stored = book?.feed?.kind === 'random-walk' ? book.feed.randomState : null;
  const seed = stored ?? settings.seed ?? Math.floor(Math.random() * 2 ** 32);
  const last = new Map<string, Quote>();
  for (const [symbol, quote] of Object.entries(state.quotes))
    last.set(canonicalSymbol(state.config.symbolMap, symbol), quote);
  return { state, feed: new RandomWalkFeed(seed, last) };
}

/**
 * The stored account (balance, currency, positions, orders) under this run's instruments.
 * Positions and orders are kept under their broker symbols, so another symbol map (or other
 * overrides) would leave them unmanaged or mispriced: refused while any are open.
 */
function resumeAccount(
  book: PaperBook,
  file: string,
  config: EngineState['config'],
  settings: PaperAccountSettings,
  log: Logger,
): EngineState {
  const stored = book.engine;
  const keep =
    'the stored value is kept (--balance and --currency only apply to a new account; to start afresh, use a fresh SIGNALGATE_DATA_DIR)';
  if (settings.given.balance && settings.balance !== stored.balance) {
    log.warn(
      { file, stored: stored.balance, flag: settings.balance },
      `--balance ${settings.balance} differs from the stored balance ${stored.balance}: ${keep}`,
    );
  }
  if (settings.given.currency && settings.currency !== stored.config.currency) {
    log.warn(
      { file, stored: stored.config.currency, flag: settings.currency },
      `--currency ${settings.currency} differs from the stored currency ${stored.config.currency}: ${keep}`,
    );
  }
  if (sameInstruments(stored.config, config)) return { ...stored, config };
  const open = [...stored.positions.map((p) => p.symbol), ...stored.orders.map((o) => o.symbol)];
  const was = `${describeInstruments(stored.config)}${book.instrumentsFile === undefined ? '' : book.instrumentsFile === null ? ', without --instruments' : ` from ${book.instrumentsFile}`}`;
  const now = `${describeInstruments(config)}${settings.instrumentsFile === null ? ', without --instruments' : ` from ${settings.instrumentsFile}`}`;
  if (open.length > 0) {
    throw new StoredAccountConflictError(
      `the paper account in ${file} has ${open.length} open position(s) or order(s) on ${[...new Set(open)].join(', ')} made with ${was}, but this run has ${now}: ` +
        'they would no longer be managed as they were opened. Restart with the instruments file they were opened with (close them first to change it), ' +
        'or start a new paper account with a fresh SIGNALGATE_DATA_DIR',
    );
  }
  log.info(
    { file, was, now },
    "the instruments changed since the last run; no position or order is open, so this run's apply",
  );
  // The last quotes move to the names this run quotes them under.
  const quotes: Record<string, Quote> = {};
  for (const [symbol, quote] of Object.entries(stored.quotes)) {
    quotes[brokerSymbol(config.symbolMap, canonicalSymbol(stored.config.symbolMap, symbol))] = quote;
  }
  return { ...stored, config, quotes };
}

/** How many ticks of this run's file were already applied; throws when the stored feed is another one. */
function resumedTicks(book: PaperBook, file: string, settings: PaperAccountSettings): number {
  const ticks = settings.ticks;
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

/** Same symbol map and instrument overrides, whatever the order of their keys. */
function sameInstruments(a: EngineState['config'], b: EngineState['config']): boolean {
  return (
    sortedJson({ map: a.symbolMap.toBroker, instruments: a.instruments }) ===
    sortedJson({ map: b.symbolMap.toBroker, instruments: b.instruments })
  );
}

function sortedJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : 1)))
      : v,
  );
}

/** `symbol map EURUSD→EURUSD.m, overrides for XAUUSD`, for messages. */
function describeInstruments(config: EngineState['config']): string {
  const map = Object.entries(config.symbolMap.toBroker).map(([canonical, broker]) => `${canonical}→${broker}`);
  const overrides = Object.keys(config.instruments);
  return `${map.length ? `symbol map ${map.join(', ')}` : 'no symbol map'}${overrides.length ? `, overrides for ${overrides.join(', ')}` : ''}`;
}
