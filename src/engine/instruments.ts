import { decimalsOf } from './decimals.js';

/**
 * The instruments catalog: what one lot of a symbol is, how big a pip is, how
 * prices are quoted and which lot sizes the broker accepts. Built-in defaults cover FX
 * (JPY-quoted pairs included), gold, silver, the common indices and crypto; any field can be
 * overridden per symbol, and a symbol the defaults do not know can be defined in full.
 */

export interface InstrumentSpec {
  /** The canonical (signal) symbol, upper case. */
  readonly symbol: string;
  readonly pipSize: number;
  /** Decimals of a quoted price; computed stops, targets and entries are rounded to them. */
  readonly digits: number;
  /** Units of the base per lot (100,000 for FX); profit = price move × lots × contractSize. */
  readonly contractSize: number;
  readonly lotMin: number;
  readonly lotStep: number;
  readonly lotMax: number;
  /** Currency that prices (and so raw profit) are expressed in. */
  readonly quoteCurrency: string;
}

export type InstrumentOverride = Partial<Omit<InstrumentSpec, 'symbol'>>;

/** Overrides keyed by canonical symbol, upper case. */
export type InstrumentOverrides = Readonly<Record<string, InstrumentOverride>>;

const LOTS = { lotMin: 0.01, lotStep: 0.01, lotMax: 100 } as const;

const CURRENCIES: ReadonlySet<string> = new Set([
  'USD',
  'EUR',
  'GBP',
  'JPY',
  'CHF',
  'CAD',
  'AUD',
  'NZD',
  'SEK',
  'NOK',
  'DKK',
  'PLN',
  'HUF',
  'CZK',
  'TRY',
  'ZAR',
  'MXN',
  'SGD',
  'HKD',
  'CNH',
  'ILS',
  'THB',
  'RUB',
]);

/** Index symbol → the currency its points are quoted in. */
const INDICES: Readonly<Record<string, string>> = {
  US30: 'USD',
  DJ30: 'USD',
  US500: 'USD',
  SPX500: 'USD',
  US100: 'USD',
  NAS100: 'USD',
  USTEC: 'USD',
  US2000: 'USD',
  GER40: 'EUR',
  GER30: 'EUR',
  DE40: 'EUR',
  DE30: 'EUR',
  FRA40: 'EUR',
  EU50: 'EUR',
  STOXX50: 'EUR',
  ESP35: 'EUR',
  UK100: 'GBP',
  JP225: 'JPY',
  JPN225: 'JPY',
  AUS200: 'AUD',
  HK50: 'HKD',
};

/** Crypto base → price digits (pip 1 and contract 1 for all of them, per the contract). */
const CRYPTO: Readonly<Record<string, number>> = {
  BTC: 2,
  ETH: 2,
  LTC: 2,
  BCH: 2,
  SOL: 2,
  XRP: 5,
  ADA: 5,
  DOGE: 5,
  DOT: 3,
  LINK: 3,
};

/** The built-in spec of a canonical symbol, or null when the defaults do not know it. */
export function defaultInstrument(symbol: string): InstrumentSpec | null {
  const s = symbol.toUpperCase();
  if (/^[A-Z]{6}$/.test(s)) {
    const base = s.slice(0, 3);
    const quote = s.slice(3);
    if (base === 'XAU' && CURRENCIES.has(quote)) {
      return { symbol: s, pipSize: 0.1, digits: 2, contractSize: 100, quoteCurrency: quote, ...LOTS };
    }
    if (base === 'XAG' && CURRENCIES.has(quote)) {
      return { symbol: s, pipSize: 0.01, digits: 3, contractSize: 5000, quoteCurrency: quote, ...LOTS };
    }
    if (CURRENCIES.has(base) && CURRENCIES.has(quote)) {
      const jpy = quote === 'JPY';
      return {
        symbol: s,
        pipSize: jpy ? 0.01 : 0.0001,
        digits: jpy ? 3 : 5,
        contractSize: 100_000,
        quoteCurrency: quote,
        ...LOTS,
      };
    }
  }
  const indexQuote = INDICES[s];
  if (indexQuote !== undefined) {
    return { symbol: s, pipSize: 1, digits: 2, contractSize: 1, quoteCurrency: indexQuote, ...LOTS };
  }
  const crypto = /^([A-Z]+)(USD|EUR|GBP|JPY)$/.exec(s);
  const cryptoDigits = crypto ? CRYPTO[crypto[1]!] : undefined;
  if (crypto && cryptoDigits !== undefined) {
    return { symbol: s, pipSize: 1, digits: cryptoDigits, contractSize: 1, quoteCurrency: crypto[2]!, ...LOTS };
  }
  return null;
}

/**
 * The spec of a canonical symbol: its defaults with the override laid over them. A symbol the
 * defaults do not know needs at least pipSize, contractSize and quoteCurrency in its override;
 * without them it is unknown (null) and signals for it are rejected.
 */
export function resolveInstrument(symbol: string, overrides: InstrumentOverrides): InstrumentSpec | null {
  const s = symbol.toUpperCase();
  const base = defaultInstrument(s);
  const override = overrides[s];
  if (override === undefined) return base;
  if (base !== null) return { ...base, ...override, symbol: s };
  const { pipSize, contractSize, quoteCurrency } = override;
  if (pipSize === undefined || contractSize === undefined || quoteCurrency === undefined) return null;
  return {
    symbol: s,
    digits: decimalsOf(pipSize) + 1,
    ...LOTS,
    ...override,
    pipSize,
    contractSize,
    quoteCurrency,
  };
}
