/**
 * The signal rules (docs/signal-language.md, "Rules") applied to the entries of one body, whichever format it came
 * in: every name known, none repeated, every parameter applying to the action, no two variants
 * of one thing, every value in range, the relations between parameters kept. Every problem is
 * reported, in body order; only a body without any becomes a normalized signal.
 */
import { scopeProblem } from './action-scope.js';
import { collect, type Collected } from './collected-parameters.js';
import { buildDistance } from './distance-rules.js';
import { claimSlot } from './parameter-conflicts.js';
import { isVolumeParameter, lookupParameter } from './parameter-table.js';
import type { ParseOutcome } from './parse-outcome.js';
import type { SignalFormat } from './signal-format.js';
import { ProblemLog } from './problem-log.js';
import { shortened } from './quoted-excerpt.js';
import type { AcceptedEntry, SignalEntry } from './signal-entry.js';
import type { NormalizedSignal } from './signal.js';
import { PENDING_ACTIONS } from './signal.js';
import { readAction, readSymbol } from './symbol-and-action.js';
import { buildTakeProfit } from './take-profit-levels.js';
import { buildBreakeven, buildTrail } from './trail-and-breakeven-rules.js';
import { MAX_SUGGESTED_UNKNOWNS, unknownParameterDetail } from './unknown-parameter.js';
import { buildVolume } from './volume-rules.js';
import { ErrorCode } from '../errors/catalog.js';

export function normalizeEntries(entries: readonly SignalEntry[], format: SignalFormat): ParseOutcome {
  const log = new ProblemLog();
  const accepted = acceptNames(entries, format, log);

  const symbol = readSymbol(accepted, format, log);
  const action = readAction(accepted, format, log);

  const collected: Collected = { levels: new Map(), shares: new Map(), trail: {}, breakeven: {} };
  const taken = new Map<string, AcceptedEntry>();
  for (const item of accepted) {
    const { entry, known } = item;
    const { definition, param } = known;
    if (definition.kind === 'symbol' || definition.kind === 'action') continue;
    // JSON `false` on a flag means "not set", exactly like leaving the key out.
    if (
      definition.kind === 'opposite' &&
      entry.value.kind === 'json' &&
      entry.value.json.kind === 'boolean' &&
      !entry.value.json.value
    ) {
      continue;
    }
    if (action !== undefined) {
      const detail = scopeProblem(definition, param, action);
      if (detail !== undefined) {
        log.add(entry.position, ErrorCode.INVALID_PARAMETER, detail, param);
        continue;
      }
    }
    if (claimSlot(item, taken, log)) collect(item, collected, log);
  }

  const volume = buildVolume(collected, taken, format, log);
  const sl = buildDistance(collected.sl, collected.slType, 'sl', 'stop loss', action, log);
  const tp = buildTakeProfit(
    { single: collected.tp, tpType: collected.tpType, levels: collected.levels, shares: collected.shares, action },
    log,
  );
  const entry = buildDistance(collected.entry, undefined, 'entry', 'entry', action, log);
  if (action !== undefined && PENDING_ACTIONS.includes(action) && !taken.has('entry')) {
    const actionEntry = accepted.find((item) => item.known.definition.kind === 'action')!.entry;
    log.add(
      actionEntry.position,
      ErrorCode.ENTRY_REQUIRED,
      `${action} is a pending order and needs its entry: add one of entry_price, entry_pips or entry_percent`,
      'action',
    );
  }
  const trail = buildTrail(collected.trail, log);
  const breakeven = buildBreakeven(collected.breakeven, log);

  if (!log.isEmpty || symbol === undefined || action === undefined) return { ok: false, problems: log.inBodyOrder() };
  const signal: NormalizedSignal = { symbol, action };
  if (collected.comment !== undefined) signal.comment = collected.comment;
  if (volume !== undefined) signal.volume = volume;
  if (sl !== undefined) signal.sl = sl;
  if (tp !== undefined) signal.tp = tp;
  if (entry !== undefined) signal.entry = entry;
  if (trail !== undefined) signal.trail = trail;
  if (breakeven !== undefined) signal.breakeven = breakeven;
  if (collected.close?.value !== undefined) signal.close = collected.close.value;
  if (collected.opposite !== undefined) signal.opposite = collected.opposite;
  return { ok: true, signal };
}

/** Drops (and reports) unknown, misplaced and repeated names; the rest go on in body order. */
function acceptNames(entries: readonly SignalEntry[], format: SignalFormat, log: ProblemLog): AcceptedEntry[] {
  const accepted: AcceptedEntry[] = [];
  const seen = new Set<string>();
  let unknown = 0;
  for (let index = 0; index < entries.length; index += 1) {
    const entry = entries[index]!;
    const known = lookupParameter(entry.name, format);
    if (known === undefined) {
      unknown += 1;
      const detail = unknownParameterDetail(entries, index, format, unknown <= MAX_SUGGESTED_UNKNOWNS);
      log.add(entry.position, ErrorCode.UNKNOWN_PARAMETER, detail, shortened(entry.name));
      continue;
    }
    const { definition, param } = known;
    if (
      format === 'text' &&
      (definition.kind === 'symbol' || definition.kind === 'action') &&
      entry.positional !== true
    ) {
      const place = definition.kind === 'symbol' ? 'first' : 'second';
      log.add(
        entry.position,
        ErrorCode.INVALID_PARAMETER,
        `in the text form the ${param} is the ${place} token itself (EURUSD,buy,...); remove ${param}=`,
        param,
      );
      continue;
    }
    if (seen.has(entry.name)) {
      log.add(
        entry.position,
        isVolumeParameter(definition) ? ErrorCode.INVALID_VOLUME : ErrorCode.INVALID_PARAMETER,
        `${param} is given more than once (names are case-insensitive); give it once`,
        param,
      );
      continue;
    }
    seen.add(entry.name);
    accepted.push({ entry, known });
  }
  return accepted;
}
