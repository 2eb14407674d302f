import type { VenueOrder } from './venue.js';

/**
 * What a buy's fee taken from the coins bought leaves its position (VenueOrder.feeInCoin), for
 * the signal's outcome or the log: said once, as what the account holds, not as an alarm.
 */
export function coinFeeNote(venueName: string, order: VenueOrder): string {
  const fee = order.feeInCoin;
  if (fee === undefined) return '';
  const dust =
    fee.dust > 0
      ? `; the ${fee.dust} ${fee.coin} left below one lot step stays in the account, outside the book (the exchange cannot sell it)`
      : '';
  return `${venueName} took its fee of ${fee.fee} ${fee.coin} from the ${order.filled} ${fee.coin} bought by order ${order.id}: the position holds the ${fee.kept} kept${dust}`;
}
