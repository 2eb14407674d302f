/**
 * The volume: flat (vol, vol_pctbal, …) or JSON typed (volume with volumeType, lots by default),
 * positive, at most 100% risk, and with a stop loss when it is sized from the loss at the stop.
 */
import type { Collected } from './collected-parameters.js';
import type { SignalFormat } from './signal-format.js';
import type { ProblemLog } from './problem-log.js';
import type { AcceptedEntry } from './signal-entry.js';
import type { Volume, VolumeType } from './signal.js';
import { volumeProblem } from './value-ranges.js';
import { ErrorCode } from '../errors/catalog.js';

const RISK_VOLUMES: readonly VolumeType[] = ['dollar', 'pctbal_loss', 'pcteq_loss'];

export function buildVolume(
  collected: Collected,
  taken: ReadonlyMap<string, AcceptedEntry>,
  format: SignalFormat,
  log: ProblemLog,
): Volume | undefined {
  const { volume, volumeType } = collected;
  if (volumeType !== undefined && (volume === undefined || volume.type !== undefined)) {
    const detail =
      volume === undefined
        ? 'volumeType is given without volume; add volume (the amount) or remove volumeType'
        : `volumeType goes with volume; ${volume.param} already carries its type in its name, so remove volumeType`;
    log.add(volumeType.position, ErrorCode.INVALID_VOLUME, detail, volumeType.param);
    return undefined;
  }
  if (volume === undefined) return undefined;
  const typeUnreadable = volume.type === undefined && volumeType !== undefined && volumeType.value === undefined;
  const type = typeUnreadable ? undefined : (volume.type ?? volumeType?.value ?? 'lots');
  const label = volume.type === undefined && type !== undefined ? `${volume.param} (${type})` : volume.param;
  const problem = volume.value === undefined ? undefined : volumeProblem(label, type, volume.value);
  if (problem !== undefined) log.add(volume.position, ErrorCode.INVALID_VOLUME, problem, volume.param);
  const needsStop = type !== undefined && RISK_VOLUMES.includes(type) && !taken.has('sl');
  if (needsStop) {
    const stops =
      format === 'json' ? 'sl_pips, sl_price or sl_percent (or sl with slType)' : 'sl_pips, sl_price or sl_percent';
    log.add(
      volume.position,
      ErrorCode.SL_REQUIRED,
      `${label} sizes the trade from the loss at the stop loss, so it needs one: add ${stops}`,
      volume.param,
    );
  }
  if (problem !== undefined || needsStop || volume.value === undefined || type === undefined) return undefined;
  return { type, value: volume.value };
}
