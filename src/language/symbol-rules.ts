/**
 * What a symbol may look like once trimmed and upper-cased. Broker symbols carry suffixes and
 * separators (EURUSD.m, GER40.cash, BTC/USD, US30#, EURUSD-ECN, #AAPL, S&P500, NASDAQ:AAPL,
 * ^DJI), so a fixed set of punctuation is allowed; spaces, commas, quotes, `=` and control
 * characters never are, and neither are letters outside A–Z (their case folding is ambiguous).
 */
import { quotedExcerpt } from './quoted-excerpt.js';

export const SYMBOL_MAX_LENGTH = 32;
export const SYMBOL_PUNCTUATION = '._-/#+!$@&^:';

const SYMBOL_CHARACTERS = /^[A-Z0-9._\-/#+!$@&^:]+$/;
const LETTER_OR_DIGIT = /[A-Z0-9]/;

/** `symbol` is trimmed and upper-cased; answers the detail of what is wrong, if anything. */
export function symbolProblem(symbol: string, format: 'text' | 'json'): string | undefined {
  // Characters are code points; only a string of more code units than the limit can have too many.
  if (symbol.length > SYMBOL_MAX_LENGTH) {
    const length = [...symbol].length;
    if (length > SYMBOL_MAX_LENGTH)
      return `symbol is ${length} characters long; a symbol has at most ${SYMBOL_MAX_LENGTH}`;
  }
  if (!SYMBOL_CHARACTERS.test(symbol)) {
    const hint =
      format === 'text' && symbol.includes('=')
        ? '; the text form starts with the symbol itself, like EURUSD,buy,sl_pips=20'
        : '';
    return `symbol ${quotedExcerpt(symbol)} may only hold letters A-Z, digits and ${SYMBOL_PUNCTUATION.split('').join(' ')} (like EURUSD, GER40.cash or BTC/USD)${hint}`;
  }
  if (!LETTER_OR_DIGIT.test(symbol))
    return `symbol ${quotedExcerpt(symbol)} must hold at least one letter or digit, like EURUSD`;
  return undefined;
}
