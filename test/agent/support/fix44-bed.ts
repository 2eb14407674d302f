import { expect } from 'vitest';
import { clientOrderId } from '../../../src/agent/client-order-id.js';
import { postSignal, waitUntil } from '../../delivery/support/delivery-setup.js';
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

/** A buy limit of 0.05 EURUSD at 1.104 (stop 30 pips, target 50) placed at the broker: the entry's ClOrdID. */
export async function placedLong(bed: Fix44Bed): Promise<string> {
  const signal = await postSignal(
    bed.server.url,
    bed.authKey,
    'EURUSD,buylimit,vol=0.05,entry_price=1.104,sl_pips=30,tp_pips=50',
  );
  expect((await bed.settled(signal)).message).toMatch(/^placed buy limit 0\.05 EURUSD/);
  return clientOrderId(signal, 'o');
}

/** `placedLong`, filled whole at the broker and protected there by its stop and target: the entry's ClOrdID. */
export async function filledProtectedLong(bed: Fix44Bed): Promise<string> {
  const entryId = await placedLong(bed);
  bed.broker.fill(entryId, 5000, 1.104);
  await waitUntil(
    () => protectionAt(bed.broker, entryId).length === 2,
    'the stop and target of the filled entry at the broker',
  );
  return entryId;
}

function protecting(broker: Fix44Counterparty, entryId: string): ReturnType<Fix44Counterparty['working']> {
  return broker.working().filter((o) => o.clOrdId.startsWith(entryId.slice(0, 18)) && o.clOrdId !== entryId);
}

/**
 * One server, one plain FIX 4.4 counterparty (EURUSD at 1.1050/1.1052, and the `prices` given)
 * and the session file for it (dialect fix44), for a `describe` block.
 */
export function useFix44Bed(
  options: {
    maxSignalAgeSeconds?: number;
    prices?: Record<string, { bid: number; ask: number }>;
    /** The HeartBtInt of the broker's Logon. */
    brokerHeartbeatSeconds?: number;
  } = {},
): Fix44Bed {
  const { prices, brokerHeartbeatSeconds, ...bed } = options;
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
        ...(brokerHeartbeatSeconds !== undefined && { heartbeatSeconds: brokerHeartbeatSeconds }),
      }),
  });
}
