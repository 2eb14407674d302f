import { catalogName, createSymbolMap, type InstrumentsFile, resolveInstrument } from '../../../engine/index.js';

/**
 * The account currencies a paper feed can price: the quote currency of each instrument it
 * quotes and, for a pair (base + quote, like EURUSD or XAUUSD), its base too. Profit in any
 * other currency could never be converted, so every signal would be rejected; such an account
 * is refused at start-up instead. Symbols are read through the symbol map, as the engine does.
 */
export function feedCurrencies(symbols: Iterable<string>, instruments: InstrumentsFile): string[] {
  const map = createSymbolMap(instruments.symbolMap, instruments.instruments);
  const found = new Set<string>();
  for (const symbol of symbols) {
    const canonical = catalogName(map, symbol);
    const spec = resolveInstrument(canonical, instruments.instruments);
    if (spec === null) continue;
    found.add(spec.quoteCurrency);
    const base = canonical.slice(0, -spec.quoteCurrency.length);
    if (canonical.endsWith(spec.quoteCurrency) && /^[A-Z]{3}$/.test(base)) found.add(base);
  }
  return [...found].sort();
}

/**
 * Why an account in another currency cannot run on this feed, as a clause the caller puts
 * after the currency and before what to do about it.
 */
export function unpriceable(currencies: readonly string[], ticksFile: string | null): string {
  const feed = ticksFile ?? 'the built-in reference prices';
  if (currencies.length === 0) {
    return `${feed} quotes no instrument the catalog knows (define its symbols in --instruments), so it can price no currency`;
  }
  return `${feed} can only price ${currencies.join(', ')} (profit in any other currency could never be converted)`;
}
