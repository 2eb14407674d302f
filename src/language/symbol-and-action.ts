/**
 * The two things every signal must have: the symbol (trimmed, upper-cased, checked against the
 * symbol rules) and the action (trimmed, lower-cased, aliases resolved). Missing, null or blank
 * is MISSING_SYMBOL / MISSING_ACTION; an action outside the list is UNKNOWN_ACTION.
 */
import { lookupAction, suggestActions } from './action-names.js';
import { asciiLowerCase, asciiUpperCase } from './ascii-case.js';
import { readTextValue } from './entry-value.js';
import { nameList } from './name-list.js';
import type { SignalFormat } from './signal-format.js';
import type { ProblemLog } from './problem-log.js';
import { quotedExcerpt } from './quoted-excerpt.js';
import type { AcceptedEntry } from './signal-entry.js';
import type { Action } from './signal.js';
import { ACTIONS } from './signal.js';
import { symbolProblem } from './symbol-rules.js';
import { ErrorCode } from '../errors/catalog.js';

/** Where problems about something absent go: before everything the body holds. */
const BEFORE_BODY = -1;

function firstOfKind(accepted: readonly AcceptedEntry[], kind: 'symbol' | 'action'): AcceptedEntry | undefined {
  for (const item of accepted) {
    if (item.known.definition.kind === kind) return item;
  }
  return undefined;
}

export function readSymbol(
  accepted: readonly AcceptedEntry[],
  format: SignalFormat,
  log: ProblemLog,
): string | undefined {
  const given = firstOfKind(accepted, 'symbol');
  const missing =
    format === 'text' ? 'the text form starts with it, like EURUSD,buy' : 'add it, like "symbol":"EURUSD"';
  if (given === undefined) {
    log.add(BEFORE_BODY - 1, ErrorCode.MISSING_SYMBOL, `symbol is missing; ${missing}`, 'symbol');
    return undefined;
  }
  const { entry } = given;
  if (entry.value.kind === 'json' && entry.value.json.kind === 'null') {
    log.add(entry.position, ErrorCode.MISSING_SYMBOL, `symbol is null; ${missing}`, 'symbol');
    return undefined;
  }
  const text = readTextValue(entry.value, 'symbol', 'EURUSD');
  if (!text.ok) {
    log.add(entry.position, ErrorCode.INVALID_PARAMETER, text.detail, 'symbol');
    return undefined;
  }
  const symbol = asciiUpperCase(text.value.trim());
  if (symbol === '') {
    log.add(entry.position, ErrorCode.MISSING_SYMBOL, `symbol is empty; ${missing}`, 'symbol');
    return undefined;
  }
  const problem = symbolProblem(symbol, format);
  if (problem !== undefined) {
    log.add(entry.position, ErrorCode.INVALID_PARAMETER, problem, 'symbol');
    return undefined;
  }
  return symbol;
}

export function readAction(
  accepted: readonly AcceptedEntry[],
  format: SignalFormat,
  log: ProblemLog,
): Action | undefined {
  const given = firstOfKind(accepted, 'action');
  const missing = format === 'text' ? 'it is the second token, like EURUSD,buy' : 'add it, like "action":"buy"';
  if (given === undefined) {
    // In text the action's place is the second token, after any problem with the symbol.
    log.add(format === 'text' ? 1 : BEFORE_BODY, ErrorCode.MISSING_ACTION, `action is missing; ${missing}`, 'action');
    return undefined;
  }
  const { entry } = given;
  if (entry.value.kind === 'json' && entry.value.json.kind === 'null') {
    log.add(entry.position, ErrorCode.MISSING_ACTION, `action is null; ${missing}`, 'action');
    return undefined;
  }
  const text = readTextValue(entry.value, 'action', 'buy');
  if (!text.ok) {
    log.add(entry.position, ErrorCode.INVALID_PARAMETER, text.detail, 'action');
    return undefined;
  }
  const written = asciiLowerCase(text.value.trim());
  if (written === '') {
    log.add(entry.position, ErrorCode.MISSING_ACTION, `action is empty; ${missing}`, 'action');
    return undefined;
  }
  const action = lookupAction(written);
  if (action !== undefined) return action;
  const suggestions = suggestActions(written);
  const hint =
    format === 'text' && written.includes('=')
      ? '; the second token is the action itself, like EURUSD,buy,sl_pips=20'
      : suggestions.length > 0
        ? `; did you mean ${nameList(suggestions, 'or')}?`
        : `; use one of ${nameList([...ACTIONS], 'or')}`;
  log.add(entry.position, ErrorCode.UNKNOWN_ACTION, `unknown action ${quotedExcerpt(written)}${hint}`, 'action');
  return undefined;
}
