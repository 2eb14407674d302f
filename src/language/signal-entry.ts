/**
 * One name/value pair as the sender wrote it, whichever body format it came in. Both readers
 * (text tokens, JSON members) produce entries in body order; the signal rules only see entries,
 * so the two formats cannot drift apart.
 */
import type { KnownParameter } from './parameter-table.js';
import type { JsonValue } from './strict-json-reader.js';

export type EntryValue =
  /** Text: a name without `=value` (how flags are written). */
  | { kind: 'bare' }
  /** Text: the trimmed value after `=`. */
  | { kind: 'text'; text: string; quoted: boolean }
  | { kind: 'json'; json: JsonValue };

export interface SignalEntry {
  /** The name as written with ASCII letters lower-cased (names are case-insensitive). */
  name: string;
  value: EntryValue;
  /** Place in the body; problems are reported in this order. */
  position: number;
  /** Text only: the symbol and action come from the first two positions, not from a name. */
  positional?: boolean;
}

/** An entry whose name is a known parameter, not repeated and not misplaced. */
export interface AcceptedEntry {
  entry: SignalEntry;
  known: KnownParameter;
}
