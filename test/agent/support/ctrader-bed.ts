import { CTraderCounterparty } from '../../fakes/ctrader-counterparty.js';
import { freePort } from '../../support/free-port.js';
import { type FixBed, useFixBed } from './fix-bed.js';

export const AGENT_COMP_ID = 'demo.broker.4242';
export const CREDENTIALS = { user: '4242', password: 'pw-ctrader-554' };
/** cTrader names symbols by numeric ids: EURUSD is 1 here. */
export const EURUSD = '1';

export type CTraderBed = FixBed<CTraderCounterparty>;

/**
 * One server, one cTrader-style counterparty (TRADE and QUOTE sessions on jspurefix's acceptor
 * side, EURUSD at 1.1050/1.1052) and the FIX session file for it (dialect ctrader), for a
 * `describe` block.
 */
export function useCTraderBed(): CTraderBed {
  return useFixBed({
    name: 'ctrader',
    credentials: CREDENTIALS,
    broker: async () =>
      new CTraderCounterparty({
        tradePort: await freePort(),
        quotePort: await freePort(),
        agentCompId: AGENT_COMP_ID,
        credentials: CREDENTIALS,
        prices: { [EURUSD]: { bid: 1.105, ask: 1.1052 } },
      }),
  });
}
