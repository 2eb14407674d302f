import type { Position } from '../engine/index.js';
import type { VenueBook } from './venue-book.js';

/**
 * What the agent does with a position whose stop the venue keeps refusing, once it refused it
 * `after` times in a row (`--unprotected`, `--unprotected-after`): `keep` holds it and says so at
 * error at most once a minute, still trying at every pass; `close` closes it at the market.
 */
export type UnprotectedRule = 'keep' | 'close';

export const UNPROTECTED_RULES: readonly UnprotectedRule[] = ['keep', 'close'];
export const DEFAULT_UNPROTECTED_RULE: UnprotectedRule = 'keep';
export const DEFAULT_UNPROTECTED_AFTER = 3;
/** An unprotected position kept is told at error at most this often. */
export const TELL_EVERY_MS = 60_000;

/** A position the venue holds without its stop and targets: published as its `unprotected` field. */
export interface Unprotected {
  /** The venue's last refusal, in its words; or why the agent has not tried yet. */
  reason: string;
  /** Refusals since the position was last protected. */
  attempts: number;
  /** ISO time the position was first seen unprotected. */
  since: string;
}

interface Entry extends Unprotected {
  toldAt: number | null;
}

/**
 * The positions of the book that should have a stop or targets at the venue and have none:
 * neither placed (refused, or never tried) nor being moved (a move keeps the old orders standing).
 */
export function lackingProtection(book: VenueBook): Position[] {
  return book.state.positions.filter((p) => {
    if (p.sl === null && p.tp.length <= p.tpNext) return false;
    const held = book.protection[String(p.ticket)];
    return held === undefined || (held.moving === undefined && held.orders.length === 0);
  });
}

/** What to do with an unprotected position after this pass's attempt. */
export type ProtectionVerdict =
  { do: 'nothing' } | { do: 'tell'; entry: Unprotected } | { do: 'close'; entry: Unprotected };

/**
 * The unprotected positions of one agent run, by ticket: their refusals counted, the rule applied.
 * In memory only: after a restart the count starts again, and the stop is tried at once.
 */
export class ProtectionWatch {
  private readonly entries = new Map<number, Entry>();

  constructor(
    private readonly rule: UnprotectedRule,
    private readonly after: number,
  ) {}

  /** The venue refused the position's stop or targets (again). */
  refused(ticket: number, reason: string, now: number): ProtectionVerdict {
    const entry = this.entryOf(ticket, now);
    entry.reason = reason;
    entry.attempts += 1;
    if (entry.attempts < this.after) return { do: 'nothing' };
    if (this.rule === 'close') return { do: 'close', entry: publicEntry(entry) };
    if (entry.toldAt !== null && now - entry.toldAt < TELL_EVERY_MS) return { do: 'nothing' };
    entry.toldAt = now;
    return { do: 'tell', entry: publicEntry(entry) };
  }

  /** Seen lacking protection without an attempt yet (its first refusal was in a signal's execution, or it was just adopted). */
  seen(ticket: number, reason: string, now: number): void {
    if (!this.entries.has(ticket)) this.entryOf(ticket, now).reason = reason;
  }

  /**
   * The venue refused positions' stops or targets while a signal, a tick or a fill report placed
   * them: each reason replaces a generic one; the pass counts the attempts.
   */
  refusedAtPlacement(refusals: readonly { position: number; reason: string }[], now: number): void {
    for (const { position, reason } of refusals) this.entryOf(position, now).reason = reason;
  }

  /** Protected now, or gone: forgotten. */
  clear(ticket: number): void {
    this.entries.delete(ticket);
  }

  /** The entries of positions still lacking protection (others are forgotten). */
  published(lacking: readonly Position[]): Map<number, Unprotected> {
    const tickets = new Set(lacking.map((p) => p.ticket));
    for (const ticket of this.entries.keys()) if (!tickets.has(ticket)) this.entries.delete(ticket);
    return new Map([...this.entries].map(([ticket, entry]) => [ticket, publicEntry(entry)]));
  }

  private entryOf(ticket: number, now: number): Entry {
    let entry = this.entries.get(ticket);
    if (!entry) {
      entry = { reason: '', attempts: 0, since: new Date(now).toISOString(), toldAt: null };
      this.entries.set(ticket, entry);
    }
    return entry;
  }
}

function publicEntry(entry: Entry): Unprotected {
  return { reason: entry.reason, attempts: entry.attempts, since: entry.since };
}

/** `--unprotected` and `--unprotected-after`, read; an error names the flag and what it takes. */
export function readUnprotectedRule(
  rule: string | undefined,
  after: string | undefined,
): { ok: true; rule: UnprotectedRule; after: number } | { ok: false; message: string } {
  const chosen = rule?.trim().toLowerCase() ?? DEFAULT_UNPROTECTED_RULE;
  if (!(UNPROTECTED_RULES as readonly string[]).includes(chosen))
    return { ok: false, message: `--unprotected must be keep or close, got "${rule}"` };
  const count = after === undefined ? DEFAULT_UNPROTECTED_AFTER : Number(after);
  if (!Number.isInteger(count) || count < 1 || count > 1000)
    return {
      ok: false,
      message: `--unprotected-after must be a whole number of refusals from 1 to 1000, got "${after}"`,
    };
  return { ok: true, rule: chosen as UnprotectedRule, after: count };
}
