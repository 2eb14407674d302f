/**
 * Which parameters apply to which action. Opening a position (market, pending or
 * close-then-open) takes the position parameters; closing takes only how much to close; cancel
 * takes nothing but a comment. A parameter that cannot apply is an error, never dropped: a
 * sender who writes sl_pips on a close action has misunderstood something worth telling.
 */
import type { ParameterDefinition } from './parameter-table.js';
import type { Action } from './signal.js';
import { CANCEL_ACTIONS, CLOSE_ACTIONS, PENDING_ACTIONS, POSITION_ACTIONS } from './signal.js';

const PENDING_LIST = 'buylimit, selllimit, buystop or sellstop';
const CLOSE_LIST = 'closebuy, closesell or closeall';

export function scopeProblem(definition: ParameterDefinition, param: string, action: Action): string | undefined {
  switch (definition.kind) {
    case 'symbol':
    case 'action':
    case 'comment':
      return undefined;
    case 'entry':
      return PENDING_ACTIONS.includes(action)
        ? undefined
        : `${param} only applies to pending orders (${PENDING_LIST}); ${action} does not take an entry`;
    case 'closePct':
    case 'closeLots':
      return CLOSE_ACTIONS.includes(action)
        ? undefined
        : `${param} only applies to ${CLOSE_LIST}; ${action} does not close a share of positions`;
    case 'opposite':
      if (POSITION_ACTIONS.includes(action)) {
        return `${param} does not apply to ${action}: a position target already closes what is on the other side`;
      }
      return scopeOfOpening(param, action);
    default:
      return scopeOfOpening(param, action);
  }
}

/** Opening parameters: refused on close and cancel actions. */
function scopeOfOpening(param: string, action: Action): string | undefined {
  if (CLOSE_ACTIONS.includes(action)) {
    return `${param} does not apply to ${action}: a close action only takes comment and pct or pct_lots`;
  }
  if (CANCEL_ACTIONS.includes(action)) {
    return `${param} does not apply to ${action}: a cancel action only takes comment`;
  }
  return undefined;
}

/** Actions whose position or order is a sell (a sell's target lies below the entry). */
export function isSellSide(action: Action): boolean {
  return (
    action === 'sell' ||
    action === 'positionshort' ||
    action === 'closelongsell' ||
    action === 'closeshortsell' ||
    action === 'selllimit' ||
    action === 'sellstop'
  );
}

/** Actions whose position or order is a buy (a buy's stop lies below the entry). */
export function isBuySide(action: Action): boolean {
  return (
    action === 'buy' ||
    action === 'positionlong' ||
    action === 'closelongbuy' ||
    action === 'closeshortbuy' ||
    action === 'buylimit' ||
    action === 'buystop'
  );
}

/** Pending orders whose entry lies below the current price. */
export function entryBelowPrice(action: Action): boolean {
  return action === 'buylimit' || action === 'sellstop';
}
