import type { Logger } from 'pino';
import { maskedInboundPath } from './logger.js';

/** What the access line of one inbound request says. */
export interface InboundAccess {
  /** The source key as it was in the path; only its start is logged. */
  encodedKey: string;
  statusCode: number;
  /** From the request's start to its answer. */
  ms: number;
  signalId: string | null;
}

/**
 * The inbound handler's access lines, written on the event loop's next turn rather than between
 * answers. Answers come back from the inbound lane a batch at a time; formatting each one's line
 * before writing the next answer held every later sender of the batch up by the lines before
 * it. The lines and their order are the same; a crash within the turn loses them, as it loses
 * the logger's unwritten block anyway.
 */
export class InboundAccessLog {
  private pending: InboundAccess[] = [];
  private scheduled: NodeJS.Immediate | null = null;

  constructor(private readonly logger: Logger) {}

  record(access: InboundAccess): void {
    this.pending.push(access);
    this.scheduled ??= setImmediate(() => this.write());
  }

  private write(): void {
    this.scheduled = null;
    const entries = this.pending;
    this.pending = [];
    for (const { encodedKey, statusCode, ms, signalId } of entries) {
      // The same access line as every other route writes (build-server.ts), plus the signal id.
      this.logger.info(
        { method: 'POST', url: maskedInboundPath(encodedKey), statusCode, ms, signalId: signalId ?? undefined },
        'request',
      );
    }
  }
}
