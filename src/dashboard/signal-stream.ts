import { ErrorCode } from '../errors/catalog.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { listSignals, type SignalQuery } from '../admin/signals.js';
import { sendProblem } from '../http-kit/send-problem.js';
import type { Store } from '../store/store.js';

/** How often an open stream reads the newest page of the log. */
export const STREAM_POLL_MS = 500;
/** A comment line this often keeps proxies from closing a quiet stream. */
const HEARTBEAT_MS = 15_000;
const DEFAULT_STREAM_PAGE = '50';

interface Entry {
  id: string;
}

/**
 * The live signal log as server-sent events (`GET /api/admin/signals/stream`, the filters of
 * `GET /api/admin/signals` except `before`). The first event, `page`, is the newest page; then
 * `signal` events carry each entry that arrived or changed since, oldest first, and a new `page`
 * replaces everything when more arrived than a page holds. It reads the store, so it shows what
 * every instance on the same database recorded; one indexed page read per stream per interval.
 */
export class SignalStreams {
  private readonly open = new Set<() => void>();

  constructor(private readonly store: Store) {}

  async serve(
    request: FastifyRequest<{ Querystring: SignalQuery }>,
    reply: FastifyReply,
  ): Promise<FastifyReply | undefined> {
    if (request.query.before !== undefined) {
      return sendProblem(reply, [
        {
          code: ErrorCode.INVALID_REQUEST,
          param: 'before',
          detail: 'the stream always starts at the newest signal; leave before out',
        },
      ]);
    }
    const query = { ...request.query, limit: request.query.limit ?? DEFAULT_STREAM_PAGE };
    const first = await listSignals(this.store, query);
    if (!first.ok) return sendProblem(reply, first.problems);

    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    });
    let seen = fingerprints(first.value.signals);
    res.write(event('page', first.value.signals));

    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), HEARTBEAT_MS);
    const stop = () => {
      if (stopped) return;
      stopped = true;
      clearTimeout(timer);
      clearInterval(heartbeat);
      this.open.delete(stop);
      res.end();
    };
    this.open.add(stop);
    request.raw.on('close', stop);

    const poll = async () => {
      if (stopped) return;
      try {
        const page = await listSignals(this.store, query);
        if (stopped) return;
        if (!page.ok) {
          // A filtered source was deleted: say so, and end the stream.
          res.write(event('problem', page.problems));
          return stop();
        }
        const now = fingerprints(page.value.signals);
        const last = page.value.signals.at(-1);
        if (last !== undefined && !seen.has(last.id) && seen.size > 0) {
          // Every entry of the page is new: some may lie beyond it, so start over.
          res.write(event('page', page.value.signals));
        } else {
          for (const signal of [...page.value.signals].reverse()) {
            if (seen.get(signal.id) !== now.get(signal.id)) res.write(event('signal', signal));
          }
        }
        seen = now;
      } catch (err) {
        request.log.warn({ err }, 'the signal stream could not read the log; it tries again');
      }
      if (!stopped) timer = setTimeout(() => void poll(), STREAM_POLL_MS);
    };
    timer = setTimeout(() => void poll(), STREAM_POLL_MS);
    return reply;
  }

  /** Ends every open stream (the server is shutting down: browsers reconnect elsewhere). */
  closeAll(): void {
    for (const stop of [...this.open]) stop();
  }
}

function fingerprints(signals: readonly Entry[]): Map<string, string> {
  return new Map(signals.map((s) => [s.id, JSON.stringify(s)]));
}

function event(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}
