import type { AckStatus, AckTimings } from '../protocol/delivery.js';
import { JournalJson } from './agent-journal.js';

/** Settled outcomes kept beyond the unacknowledged ones, to recognise a late redelivery. */
const KEPT_SETTLED = 256;

/** A signal the agent executed (or refused), and what was acknowledged for it. */
export interface ExecutedSignal {
  id: string;
  seq: number;
  executedAt: string;
  /** `timings`: absent when the signal never reached the engine (refused before), and in journals written before them. */
  outcome: { status: AckStatus; message: string | null; result: unknown; timings?: AckTimings };
  /** The server settled the ack; until then it is sent again after a restart. */
  acked: boolean;
}

/**
 * Forgets the oldest settled outcomes beyond the latest KEPT_SETTLED; unacknowledged ones are
 * always kept. A settled signal is not handed out again, so only a redelivery racing the ack
 * needs the memory.
 */
export function forgetSettled(executed: Map<string, ExecutedSignal>): void {
  let excess = -KEPT_SETTLED;
  for (const entry of executed.values()) if (entry.acked) excess += 1;
  if (excess <= 0) return;
  for (const [id, entry] of executed) {
    if (excess <= 0) break;
    if (entry.acked) {
      executed.delete(id);
      excess -= 1;
    }
  }
}

/** Each entry's JSON (UTF-8), made again only once it is acknowledged (the one change an entry sees). */
const serialised = new WeakMap<ExecutedSignal, { acked: boolean; json: Buffer }>();
const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

/**
 * The entries as the journal writes them: each serialised once, not at every write; a settled
 * one without its result and timings, which the server holds: what a late redelivery needs is the
 * status to acknowledge again, and the whole outcomes made most of each write.
 */
export function executedJson(entries: Iterable<ExecutedSignal>): JournalJson {
  const pieces: Buffer[] = [OPEN];
  for (const entry of entries) {
    let known = serialised.get(entry);
    if (known?.acked !== entry.acked) {
      known = { acked: entry.acked, json: Buffer.from(JSON.stringify(entry.acked ? settledEntry(entry) : entry)) };
      serialised.set(entry, known);
    }
    if (pieces.length > 1) pieces.push(COMMA);
    pieces.push(known.json);
  }
  pieces.push(CLOSE);
  return new JournalJson(pieces);
}

/** What the journal keeps of a settled outcome. */
function settledEntry(entry: ExecutedSignal): ExecutedSignal {
  const { status, message } = entry.outcome;
  return {
    id: entry.id,
    seq: entry.seq,
    executedAt: entry.executedAt,
    outcome: { status, message, result: null },
    acked: true,
  };
}
