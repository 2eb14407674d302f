/**
 * Per-agent symbol mapping (CONTRACT §7): signals name the canonical symbol (`EURUSD`), the
 * broker trades and quotes it under its own name (`EURUSD.m`). Positions, orders and quotes
 * are kept under the broker name; instrument specs and currency pairs are looked up by the
 * canonical one. Matching is case-insensitive; the broker name keeps the spelling it was given.
 */

export interface SymbolMap {
  /** Canonical (upper case) → broker symbol as spelt in the mapping. */
  readonly toBroker: Readonly<Record<string, string>>;
  /** Broker symbol upper-cased → canonical. */
  readonly toCanonical: Readonly<Record<string, string>>;
}

/** Builds the map; throws when two canonical symbols map to the same broker symbol. */
export function createSymbolMap(mapping: Readonly<Record<string, string>> = {}): SymbolMap {
  const toBroker: Record<string, string> = {};
  const toCanonical: Record<string, string> = {};
  for (const [canonical, broker] of Object.entries(mapping)) {
    const from = canonical.trim().toUpperCase();
    const to = broker.trim();
    const key = to.toUpperCase();
    const taken = toCanonical[key];
    if (taken !== undefined && taken !== from) {
      throw new Error(`symbols ${taken} and ${from} both map to ${to}`);
    }
    toBroker[from] = to;
    toCanonical[key] = from;
  }
  return { toBroker, toCanonical };
}

/** The canonical symbol of a signal or broker symbol. */
export function canonicalSymbol(map: SymbolMap, symbol: string): string {
  const upper = symbol.trim().toUpperCase();
  return map.toCanonical[upper] ?? upper;
}

/** The broker symbol a canonical symbol is traded and quoted under. */
export function brokerSymbol(map: SymbolMap, canonical: string): string {
  return map.toBroker[canonical] ?? canonical;
}
