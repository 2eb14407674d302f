import { pino, type Logger } from 'pino';
import { maskedInboundPath } from './logger.js';

/** What the access line of one inbound request says. */
export interface InboundAccess {
  /** The source key as it was in the path; only its start is logged. */
  encodedKey: string;
  statusCode: number;
  /** From the request's start to its answer. */
  ms: number;
  /** Where the request came from (the socket's peer, or X-Forwarded-For from a trusted proxy). */
  clientAddress: string;
  signalId: string | null;
  /**
   * Set when the signal was accepted with no agent to deliver it to: its warning line follows
   * the access line (the same bytes as `logger.warn({ signalId, sourceId }, NO_AGENTS_MESSAGE)`).
   */
  noAgentsSourceId?: string;
}

/** The warning for a signal accepted with no agent to deliver it to. */
export const NO_AGENTS_MESSAGE =
  'signal accepted with no agent to deliver it to: nobody will execute it; create an agent in its account, or route the source to one';

/** pino's internals that make a line; `pino.symbols` is its interface for integrations. */
interface PinoParts {
  [pino.symbols.lsCacheSym]: Record<number, string>;
  [pino.symbols.timeSym]: () => string;
  [pino.symbols.chindingsSym]: string;
  [pino.symbols.endSym]: string;
  [pino.symbols.streamSym]: { write(line: string): unknown };
}

/** Whether pino writes `text` as it is: no quote, backslash, control character or surrogate. */
function isPlain(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff)) return false;
  }
  return true;
}

/**
 * The inbound handler's access lines, and the warning of a signal no agent will get: the same bytes `logger.info({ method, url, statusCode, ms,
 * clientAddress, signalId }, 'request')` writes, made from pino's own level prefix, time field and bindings, and
 * handed to its destination in one block per turn. pino's general path (an object per line,
 * each key looked up and escaped) took twice as long per line in a micro-benchmark (1.8 against
 * 0.9 µs), on the event loop, the thread every answer waits for. A path that would need escaping
 * goes through pino itself.
 *
 * Written on the event loop's next turn rather than between answers: answers come back from the
 * inbound lane a batch at a time, and formatting each one's line before writing the next answer
 * held every later sender of the batch up by the lines before it. A crash within the turn loses
 * them, as it loses the logger's unwritten block anyway. A drain calls `flush` once the last
 * answer is out: which of the next turn's callbacks runs first is not fixed, and the drain's
 * own last lines must not come before the answers' lines.
 */
export class InboundAccessLog {
  private pending: InboundAccess[] = [];
  private scheduled: NodeJS.Immediate | null = null;

  constructor(private readonly logger: Logger) {}

  record(access: InboundAccess): void {
    this.pending.push(access);
    this.scheduled ??= setImmediate(() => this.write());
  }

  /** Writes what is recorded now, rather than on the next turn. */
  flush(): void {
    if (this.scheduled === null) return;
    clearImmediate(this.scheduled);
    this.write();
  }

  private write(): void {
    this.scheduled = null;
    const entries = this.pending;
    this.pending = [];
    const logger = this.logger;
    const info = logger.isLevelEnabled('info');
    const warn = logger.isLevelEnabled('warn');
    if (!warn) return;
    const parts = logger as unknown as PinoParts;
    const infoStart = parts[pino.symbols.lsCacheSym][logger.levels.values.info!]!;
    const warnStart = parts[pino.symbols.lsCacheSym][logger.levels.values.warn!]!;
    const bindings = parts[pino.symbols.chindingsSym];
    const end = parts[pino.symbols.endSym];
    const stream = parts[pino.symbols.streamSym];
    let block = '';
    for (const { encodedKey, statusCode, ms, clientAddress, signalId, noAgentsSourceId } of entries) {
      if (info) {
        const url = maskedInboundPath(encodedKey);
        if (
          !isPlain(url) ||
          !isPlain(clientAddress) ||
          (signalId !== null && !isPlain(signalId)) ||
          !Number.isFinite(ms)
        ) {
          // In order: what is made so far goes first.
          if (block !== '') stream.write(block);
          block = '';
          logger.info(
            { method: 'POST', url, statusCode, ms, clientAddress, signalId: signalId ?? undefined },
            'request',
          );
        } else {
          block += `${infoStart}${parts[pino.symbols.timeSym]()}${bindings},"method":"POST","url":"${url}","statusCode":${statusCode},"ms":${ms},"clientAddress":"${clientAddress}"${
            signalId === null ? '' : `,"signalId":"${signalId}"`
          },"msg":"request"${end}`;
        }
      }
      if (noAgentsSourceId === undefined || signalId === null) continue;
      if (!isPlain(signalId) || !isPlain(noAgentsSourceId)) {
        if (block !== '') stream.write(block);
        block = '';
        logger.warn({ signalId, sourceId: noAgentsSourceId }, NO_AGENTS_MESSAGE);
        continue;
      }
      block += `${warnStart}${parts[pino.symbols.timeSym]()}${bindings},"signalId":"${signalId}","sourceId":"${noAgentsSourceId}","msg":"${NO_AGENTS_MESSAGE}"${end}`;
    }
    if (block !== '') stream.write(block);
  }
}
