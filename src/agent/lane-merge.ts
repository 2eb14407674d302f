import { withExits, type VenueBook } from './venue-book.js';

/**
 * What a symbol's lane did to the book, put into the book as it stands now. A lane works on the
 * book as it took it (`base`) and ends with `result`; meanwhile other symbols' lanes changed the
 * book (`live`). The lane's symbol is its own: its positions, pending orders and their venue
 * links come from `result`, everything else from `live`. The balance takes the lane's change
 * (a close's profit) on top of what the others did; tickets never go back. The exit fills kept
 * for busts are `live`'s and those the lane added (its closes').
 */
export function mergeLane(live: VenueBook, base: VenueBook, result: VenueBook, symbol: string): VenueBook {
  // The exit fills a lane kept (its closes') join those of the book as it stands.
  const added = Object.fromEntries(Object.entries(result.exits ?? {}).filter(([id]) => !base.exits?.[id]));
  if (live === base) return result.exits === live.exits ? result : withExits(result, live.exits, added);
  const tickets = new Set<string>();
  for (const book of [base, result]) {
    for (const p of book.state.positions) if (p.symbol === symbol) tickets.add(String(p.ticket));
    for (const o of book.state.orders) if (o.symbol === symbol) tickets.add(String(o.ticket));
  }
  const links = <T>(now: Record<string, T> | undefined, after: Record<string, T> | undefined) => {
    const merged: Record<string, T> = {};
    for (const [key, value] of Object.entries(now ?? {})) if (!tickets.has(key)) merged[key] = value;
    for (const [key, value] of Object.entries(after ?? {})) if (tickets.has(key)) merged[key] = value;
    return merged;
  };
  const byTicket = (a: { ticket: number }, b: { ticket: number }) => a.ticket - b.ticket;
  const state = live.state;
  const quote = result.state.quotes[symbol];
  return withExits(
    {
      state: {
        ...state,
        balance:
          result.state.balance === base.state.balance
            ? state.balance
            : state.balance + (result.state.balance - base.state.balance),
        quotes: quote === undefined ? state.quotes : { ...state.quotes, [symbol]: quote },
        positions: [
          ...state.positions.filter((p) => p.symbol !== symbol),
          ...result.state.positions.filter((p) => p.symbol === symbol),
        ].sort(byTicket),
        orders: [
          ...state.orders.filter((o) => o.symbol !== symbol),
          ...result.state.orders.filter((o) => o.symbol === symbol),
        ].sort(byTicket),
        nextTicket: Math.max(state.nextTicket, result.state.nextTicket),
      },
      protection: links(live.protection, result.protection),
      orders: links(live.orders, result.orders),
      ...((live.positions !== undefined || result.positions !== undefined) && {
        positions: links(live.positions, result.positions),
      }),
    },
    live.exits,
    added,
  );
}
