/**
 * Sizing: turns a signal's volume into lots, in the account's currency.
 * - lots: as given;
 * - pctbal / pcteq: notional value (lots × contract size × price, converted to the account
 *   currency) equals that percent of balance / equity;
 * - dollar / pctbal_loss / pcteq_loss: the loss if the stop is hit (|price − stop| × lots ×
 *   contract size, converted) equals the amount / that percent of balance / equity;
 * - no volume: the configured default lots, or the instrument's minimum lot.
 * Every result is floored to the lot step and checked against the minimum and maximum.
 */
import type { Volume } from '../language/index.js';
import { roundTo } from './decimals.js';
import type { InstrumentSpec } from './instruments.js';
import { checkLots, type LotsOutcome } from './lots.js';

export interface SizingRequest {
  readonly volume: Volume | undefined;
  /** Lots used when the signal has no volume; null means the instrument's minimum lot. */
  readonly defaultLots: number | null;
  readonly spec: InstrumentSpec;
  /** Fill price for a market order, entry price for a pending one. */
  readonly price: number;
  readonly sl: number | null;
  /** Account-currency units per unit of the instrument's quote currency. */
  readonly rate: number;
  readonly balance: number;
  /** Equity is only worked out when a pcteq sizing needs it. */
  readonly equity: () => number;
  readonly currency: string;
}

export function sizeOrder(request: SizingRequest): LotsOutcome {
  const { volume, spec, price, sl, rate, currency } = request;
  if (volume === undefined) return checkLots(request.defaultLots ?? spec.lotMin, spec);
  if (volume.type === 'lots') return checkLots(volume.value, spec);

  const basis = volume.type === 'pcteq' || volume.type === 'pcteq_loss' ? 'equity' : 'balance';
  const account = volume.type === 'dollar' ? null : basis === 'equity' ? request.equity() : request.balance;
  if (account !== null && !(account > 0)) {
    return {
      ok: false,
      reason: `the account ${basis} (${account.toFixed(2)} ${currency}) is not positive, so it sizes no trade`,
    };
  }
  const amount = account === null ? volume.value : (account * volume.value) / 100;

  if (volume.type === 'pctbal' || volume.type === 'pcteq') {
    const notionalPerLot = spec.contractSize * price * rate;
    return checkLots(amount / notionalPerLot, spec);
  }
  if (sl === null) {
    return { ok: false, reason: `sizing by risk (${volume.type}) needs a stop loss` };
  }
  // Both prices lie on the instrument's decimal grid, so their distance does too; rounding it
  // removes the float error of the subtraction before it is multiplied up.
  const distance = roundTo(Math.abs(price - sl), spec.digits);
  const lossPerLot = distance * spec.contractSize * rate;
  return checkLots(amount / lossPerLot, spec);
}
