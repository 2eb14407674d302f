import type { Problem } from '../errors/catalog.js';
import type { NormalizedSignal } from './signal.js';

export type SignalFormat = 'text' | 'json';

export type ParseOutcome = { ok: true; signal: NormalizedSignal } | { ok: false; problems: Problem[] };

/**
 * Parses one signal body (text line or JSON object) into the normalized signal.
 * PLACEHOLDER: implemented by the signal-language work.
 */
export function parseSignal(_body: string, _format: SignalFormat): ParseOutcome {
  throw new Error('not implemented');
}
