import type { PageRequest, RecordPage } from './record-page.js';
import type { Source } from './records.js';

/** The sources that send signals: their keys, routing and checks. */
export interface Sources {
  create(source: Source): Promise<void>;
  get(id: string): Promise<Source | null>;
  findByAuthKey(authKey: string): Promise<Source | null>;
  /**
   * Applies the patch; null when no such source. A new `maxSignalAgeSeconds` applies, in the
   * same commit, to the source's deliveries not yet final (`queued`, or `delivered` and not
   * acknowledged) whose deadline is still ahead at `now`: each then expires at its signal's
   * receivedAt plus the new age. One already past its deadline keeps it, whether or not the
   * sweep has marked it yet: a raise never revives a signal that was due to expire.
   */
  update(id: string, patch: SourcePatch, now: string): Promise<Source | null>;
  /** Sources (of one account, or all), newest first, a page at a time. */
  list(filter: SourceFilter): Promise<RecordPage<Source>>;
  /**
   * Removes the source, its signal log (with the deliveries of its signals, so none still
   * queued is handed out) and its idempotency keys; false when no such source. Its key is
   * refused from this commit on.
   */
  delete(id: string): Promise<boolean>;
}

export interface SourceFilter extends PageRequest {
  accountId?: string;
}

export interface SourcePatch {
  name?: string;
  active?: boolean;
  hmacSecret?: string | null;
  agentIds?: string[];
  maxSignalAgeSeconds?: number;
  duplicateWindowSeconds?: number;
  allowedIps?: string[];
  /** A new auth key, in clear: the store keeps only its digest and hint (`storedAuthKey`). */
  authKey?: string;
}
