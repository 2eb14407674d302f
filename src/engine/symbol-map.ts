/**
 * Per-agent symbol mapping: signals name a ticker (`EURUSD`, `GOLD`, `ES1!`), the
 * venue trades and quotes it under its own symbol (`EURUSD.m`, `XAUUSD`, `US500`). Positions,
 * orders and quotes are kept under the venue symbol. Several tickers may map to one venue
 * symbol: they trade the same positions.
 *
 * Each venue symbol has one catalog name, the name its instrument is looked up by: the first of
 * its tickers (in the map's order, each also without an exchange prefix) that the catalog or the
 * overrides know, else the venue symbol itself when they know it (`GOLD` → `XAUUSD` trades as
 * XAUUSD), else its first ticker (then unknown: signals for it are rejected until it is defined). Two known names for one venue
 * symbol must be the same instrument. Matching is case-insensitive; the venue symbol keeps the
 * spelling it was given.
 */
import { type InstrumentOverrides, type InstrumentSpec, resolveInstrument } from './instruments.js';

export interface SymbolMap {
  /** Ticker (upper case) → venue symbol as spelt in the mapping. */
  readonly toBroker: Readonly<Record<string, string>>;
  /** Venue symbol upper-cased → its first ticker. */
  readonly toCanonical: Readonly<Record<string, string>>;
  /** Venue symbol upper-cased → its catalog name, the name its instrument is looked up by. */
  readonly catalogNames: Readonly<Record<string, string>>;
}

/**
 * Builds the map; throws when two names of one venue symbol are different instruments, or when
 * a venue symbol is itself a ticker mapped to another venue symbol (a chain).
 */
export function createSymbolMap(
  mapping: Readonly<Record<string, string>> = {},
  overrides: InstrumentOverrides = {},
): SymbolMap {
  const toBroker: Record<string, string> = {};
  const tickersOf = new Map<string, string[]>();
  for (const [ticker, broker] of Object.entries(mapping)) {
    const from = ticker.trim().toUpperCase();
    const to = broker.trim();
    toBroker[from] = to;
    const key = to.toUpperCase();
    tickersOf.set(key, [...(tickersOf.get(key) ?? []), from]);
  }
  const toCanonical: Record<string, string> = {};
  const catalogNames: Record<string, string> = {};
  for (const [venue, tickers] of tickersOf) {
    const onward = toBroker[venue];
    if (onward !== undefined && onward.toUpperCase() !== venue) {
      throw new Error(
        `${tickers[0]} maps to ${venue}, which itself maps to ${onward}: map ${tickers[0]} to ${onward} directly`,
      );
    }
    // A mapped `OANDA:EURUSD` is the EURUSD instrument, as an unmapped one would be.
    const names = [...new Set([...tickers.flatMap((ticker) => [ticker, withoutExchange(ticker) ?? ticker]), venue])];
    const known = names.flatMap((name) => {
      const spec = resolveInstrument(name, overrides);
      return spec === null ? [] : [{ name, spec }];
    });
    const [first] = known;
    for (const other of known.slice(1)) {
      if (!sameInstrument(first!.spec, other.spec)) {
        throw new Error(
          `${first!.name} and ${other.name} both name ${venue} but are different instruments; map only one of them to ${venue}, or give both the same fields in "instruments"`,
        );
      }
    }
    toCanonical[venue] = tickers[0]!;
    catalogNames[venue] = first?.name ?? tickers[0]!;
  }
  return { toBroker, toCanonical, catalogNames };
}

/** The ticker of a venue symbol (its first one), or the symbol itself when unmapped. */
export function canonicalSymbol(map: SymbolMap, symbol: string): string {
  const upper = symbol.trim().toUpperCase();
  return map.toCanonical[upper] ?? upper;
}

/** The venue symbol a ticker is traded and quoted under. */
export function brokerSymbol(map: SymbolMap, canonical: string): string {
  return map.toBroker[canonical] ?? canonical;
}

/** The name a ticker's or venue symbol's instrument is looked up by in the catalog and the overrides. */
export function catalogName(map: SymbolMap, symbol: string): string {
  const canonical = canonicalSymbol(map, symbol);
  return map.catalogNames[brokerSymbol(map, canonical).toUpperCase()] ?? canonical;
}

/** `OANDA:EURUSD` → `EURUSD`; null when there is no single exchange prefix. */
function withoutExchange(symbol: string): string | null {
  return /^[A-Z0-9_]+:([^:]+)$/.exec(symbol)?.[1] ?? null;
}

export type SignalSymbol = { ok: true; canonical: string } | { ok: false; reason: string };

/**
 * The catalog name a signal's symbol trades as, with TradingView's spellings (`{{ticker}}`,
 * `{{exchange}}:{{ticker}}`) read where that is unambiguous; the signal itself keeps what the
 * sender wrote. A mapping of the exact symbol always wins. Otherwise:
 * - `BINANCE:BTCUSDT`, `OANDA:EURUSD`: the prefix names where the chart's data comes from, not
 *   what the venue trades, so it is dropped and the rest resolved (BTCUSDT, EURUSD);
 * - `BTCUSDT.P` (a perpetual future) and `ES1!` (a continuous future, rolling from contract to
 *   contract) are other instruments than the spot or cash symbol they resemble: they trade only
 *   through a mapping that says which venue symbol they are.
 */
export function resolveSignalSymbol(map: SymbolMap, symbol: string): SignalSymbol {
  const upper = symbol.trim().toUpperCase();
  if (map.toBroker[upper] !== undefined || map.toCanonical[upper] !== undefined)
    return { ok: true, canonical: canonicalSymbol(map, upper) };
  const unprefixed = withoutExchange(upper);
  if (unprefixed !== null) {
    const rest = resolveSignalSymbol(map, unprefixed);
    return rest.ok ? rest : { ok: false, reason: `${symbol} (read as ${unprefixed}): ${rest.reason}` };
  }
  const mapHint = (example: string) =>
    `add it to the symbolMap of the instruments file (like "${upper}": "${example}")`;
  if (upper.endsWith('.P')) {
    return {
      ok: false,
      reason: `${upper} is a TradingView perpetual-futures symbol, not the spot ${upper.slice(0, -2)}; to trade it, ${mapHint(upper.slice(0, -2))} naming the venue's symbol for it`,
    };
  }
  if (/\d!$/.test(upper)) {
    return {
      ok: false,
      reason: `${upper} is a TradingView continuous-futures symbol, which rolls from contract to contract; to trade it, ${mapHint('US500')} naming the venue's symbol for it`,
    };
  }
  return { ok: true, canonical: upper };
}

/** Every field but the name the same. */
function sameInstrument(a: InstrumentSpec, b: InstrumentSpec): boolean {
  return (
    a.pipSize === b.pipSize &&
    a.digits === b.digits &&
    a.contractSize === b.contractSize &&
    a.lotMin === b.lotMin &&
    a.lotStep === b.lotStep &&
    a.lotMax === b.lotMax &&
    a.quoteCurrency === b.quoteCurrency
  );
}
