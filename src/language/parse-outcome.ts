import type { Problem } from '../errors/catalog.js';
import type { NormalizedSignal } from './signal.js';

/** What parsing one body yields: the normalized signal, or every problem found in body order. */
export type ParseOutcome = { ok: true; signal: NormalizedSignal } | { ok: false; problems: Problem[] };
