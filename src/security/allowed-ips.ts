import { AddressList, addressEntryProblem } from './address-list.js';

/**
 * The word a source's `allowedIps` may hold for TradingView's webhook senders, and the
 * addresses TradingView publishes for them. Kept as the word in the source, so a change of
 * TradingView's list is a change here, not an edit of every source.
 */
export const TRADINGVIEW = 'tradingview';
export const TRADINGVIEW_ADDRESSES: readonly string[] = [
  '52.89.214.238',
  '34.212.75.30',
  '54.218.53.128',
  '52.32.178.7',
];

/** The most entries one source's allowlist may have. */
export const MAX_ALLOWED_IPS = 100;

/**
 * What is wrong with a proposed `allowedIps`, one sentence per bad entry (naming it), or an
 * empty list when it can be stored as it is.
 */
export function allowedIpsProblems(entries: readonly string[]): string[] {
  if (entries.length > MAX_ALLOWED_IPS)
    return [`at most ${MAX_ALLOWED_IPS} entries; use CIDR ranges to cover more addresses`];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    if (seen.has(entry)) problems.push(`'${entry}' is listed twice; list each entry once`);
    seen.add(entry);
    if (entry === TRADINGVIEW) continue;
    const problem = addressEntryProblem(entry);
    if (problem !== null) problems.push(`${problem}, or the word '${TRADINGVIEW}' for TradingView's webhook addresses`);
  }
  return problems;
}

/** Matchers by allowlist, made once: sources are read afresh for each request. */
const matchers = new Map<string, AddressList>();
const MAX_MATCHERS = 1000;

/**
 * Whether a request from `clientAddress` may use a source with this allowlist (valid entries
 * only): any address when the list is empty.
 */
export function isAllowedAddress(allowedIps: readonly string[], clientAddress: string): boolean {
  if (allowedIps.length === 0) return true;
  const key = allowedIps.join(',');
  let matcher = matchers.get(key);
  if (matcher === undefined) {
    if (matchers.size >= MAX_MATCHERS) matchers.clear();
    matcher = new AddressList(allowedIps.flatMap((entry) => (entry === TRADINGVIEW ? TRADINGVIEW_ADDRESSES : [entry])));
    matchers.set(key, matcher);
  }
  return matcher.includes(clientAddress);
}
