import { Fix44Counterparty } from '../../fakes/fix44-counterparty.js';
import { freePort } from '../../support/free-port.js';
import { type FixBed, useFixBed } from './fix-bed.js';

export const AGENT_COMP_ID = 'SGAGENT44';
export const CREDENTIALS = { user: 'trader-44', password: 'pw-fix44-554' };

export type Fix44Bed = FixBed<Fix44Counterparty>;

/**
 * The orders working at the broker that protect the position of the entry `entryId` (their
 * ClOrdIDs share the signal's prefix), as [side, type, price, units], sorted.
 */
export function protectionAt(broker: Fix44Counterparty, entryId: string): unknown[][] {
  return protecting(broker, entryId)
    .map((o) => [o.side, o.ordType, o.price, o.units])
    .sort();
}

/** The order working at the broker that protects the entry `entryId` with OrdType `ordType` (2 target, 3 stop). */
export function protectingOrder(
  broker: Fix44Counterparty,
  entryId: string,
  ordType: '2' | '3',
): ReturnType<Fix44Counterparty['working']>[number] {
  return protecting(broker, entryId).find((o) => o.ordType === ordType)!;
}

function protecting(broker: Fix44Counterparty, entryId: string): ReturnType<Fix44Counterparty['working']> {
  return broker.working().filter((o) => o.clOrdId.startsWith(entryId.slice(0, 18)) && o.clOrdId !== entryId);
}

/**
 * One server, one plain FIX 4.4 counterparty (EURUSD at 1.1050/1.1052, and the `prices` given)
 * and the session file for it (dialect fix44), for a `describe` block.
 */
export function useFix44Bed(
  options: { maxSignalAgeSeconds?: number; prices?: Record<string, { bid: number; ask: number }> } = {},
): Fix44Bed {
  const { prices, ...bed } = options;
  return useFixBed({
    ...bed,
    name: 'fix44',
    credentials: CREDENTIALS,
    broker: async () =>
      new Fix44Counterparty({
        port: await freePort(),
        agentCompId: AGENT_COMP_ID,
        credentials: CREDENTIALS,
        prices: { EURUSD: { bid: 1.105, ask: 1.1052 }, ...prices },
      }),
  });
}
