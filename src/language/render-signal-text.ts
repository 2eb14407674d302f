/**
 * The canonical text form of a normalized signal: `parseSignal(renderSignalText(s), 'text')`
 * gives `s` back. Every default is written out (trail trigger and step, breakeven offset, TP
 * shares), so the line says exactly what will be executed.
 */
import { formatDecimal } from './decimal-number.js';
import type { NormalizedSignal, VolumeType } from './signal.js';

const VOLUME_NAMES: Readonly<Record<VolumeType, string>> = {
  lots: 'vol',
  pctbal: 'vol_pctbal',
  pcteq: 'vol_pcteq',
  dollar: 'vol_dollar',
  pctbal_loss: 'vol_pctbal_loss',
  pcteq_loss: 'vol_pcteq_loss',
};

export function renderSignalText(signal: NormalizedSignal): string {
  const tokens: string[] = [signal.symbol, signal.action];
  const add = (name: string, value: number): void => {
    tokens.push(`${name}=${formatDecimal(value)}`);
  };
  if (signal.comment !== undefined) tokens.push(`comment=${quoteIfNeeded(signal.comment)}`);
  if (signal.volume !== undefined) add(VOLUME_NAMES[signal.volume.type], signal.volume.value);
  if (signal.sl !== undefined) add(`sl_${signal.sl.type}`, signal.sl.value);
  if (signal.tp !== undefined) {
    const [only] = signal.tp;
    if (signal.tp.length === 1 && only !== undefined && only.pct === 100) {
      add(`tp_${only.type}`, only.value);
    } else {
      signal.tp.forEach((level, index) => {
        add(`tp${index + 1}_${level.type}`, level.value);
        add(`pct${index + 1}`, level.pct);
      });
    }
  }
  if (signal.entry !== undefined) add(`entry_${signal.entry.type}`, signal.entry.value);
  if (signal.trail !== undefined) {
    add('trail_trigger', signal.trail.trigger);
    add('trail_distance', signal.trail.distance);
    add('trail_step', signal.trail.step);
  }
  if (signal.breakeven !== undefined) {
    add('be_trigger', signal.breakeven.trigger);
    add('be_offset', signal.breakeven.offset);
  }
  if (signal.close !== undefined) {
    if ('pct' in signal.close) add('pct', signal.close.pct);
    else add('pct_lots', signal.close.lots);
  }
  if (signal.opposite !== undefined) tokens.push(signal.opposite === 'exit' ? 'exop' : 'exent');
  return tokens.join(',');
}

/** Quotes a comment holding a comma or a quote; a quote inside quotes is doubled. */
function quoteIfNeeded(comment: string): string {
  return /[,"]/.test(comment) ? `"${comment.replace(/"/g, '""')}"` : comment;
}
