import type { IngestOutcome } from './store.js';

/** What one ingest of a batch came to inside a store: its outcome, and whom to wake. */
export interface IngestDone {
  outcome: IngestOutcome;
  /** Agents that got a new delivery, to be told once the batch is committed. */
  agentIds: string[];
}
