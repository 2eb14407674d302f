import type { InstrumentSpec, Quote } from '../engine/index.js';
import type { NormalizedSignal } from '../language/index.js';

/**
 * A broker may take orders yet give no quotes (it refuses market data). A pending entry at a
 * price, sized in lots (or the default lots), needs none: the engine reads a quote only to check
 * that the entry is on its side of the market, which the broker checks itself on the order.
 * This answers a stand-in quote one tick beyond the entry on the side that passes that check, for
 * that one execution, or null for a signal that does need a quote (market orders, closes, an
 * entry in pips or percent from the market, a size from the balance, equity or risk).
 */
export function quotelessEntryQuote(signal: NormalizedSignal, spec: Pick<InstrumentSpec, 'digits'>): Quote | null {
  const kind = {
    buylimit: ['buy', 'limit'],
    selllimit: ['sell', 'limit'],
    buystop: ['buy', 'stop'],
    sellstop: ['sell', 'stop'],
  }[signal.action as string];
  if (kind === undefined || signal.entry?.type !== 'price') return null;
  if (signal.volume !== undefined && signal.volume.type !== 'lots') return null;
  // The engine's reference is the ask for a buy, the bid for a sell; a limit waits below it
  // (buy) or above it (sell), a stop the other way.
  const [side, type] = kind;
  const below = (side === 'buy') === (type === 'limit');
  const tick = 10 ** -spec.digits;
  const price = Number((signal.entry.value + (below ? tick : -tick)).toFixed(spec.digits));
  return { bid: price, ask: price };
}
