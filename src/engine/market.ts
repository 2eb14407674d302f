/**
 * Quotes and which side of them a trade uses: buys fill at the ask and close at
 * the bid; sells fill at the bid and close at the ask.
 */

export type Side = 'buy' | 'sell';

export interface Quote {
  readonly bid: number;
  readonly ask: number;
}

/** Latest quote per broker symbol. */
export type Quotes = Readonly<Record<string, Quote>>;

export function fillPrice(side: Side, quote: Quote): number {
  return side === 'buy' ? quote.ask : quote.bid;
}

/** The price a position of this side closes at, and so the price its stops and targets watch. */
export function closePrice(side: Side, quote: Quote): number {
  return side === 'buy' ? quote.bid : quote.ask;
}

/** +1 for a buy, -1 for a sell: the sign of profit per unit of price rise. */
export function direction(side: Side): 1 | -1 {
  return side === 'buy' ? 1 : -1;
}

export function oppositeSide(side: Side): Side {
  return side === 'buy' ? 'sell' : 'buy';
}

export function midPrice(quote: Quote): number {
  return (quote.bid + quote.ask) / 2;
}
