import { type RawAnswer, RawHttpConnection, now } from './raw-http-connection.js';

export { now };

/** One inbound request of an open-loop schedule: sent `at` ms after the start whatever came before. */
export interface Scheduled {
  at: number;
  path: string;
  body: string;
}

export interface Answer {
  scheduledAt: number;
  /** Epoch ms the request was written to a connection (after any wait for a free one); NaN if never. */
  sentAt: number;
  /** Epoch ms the answer's head arrived; NaN when the request failed. */
  answeredAt: number;
  status: number;
  /** The signal id of a 202. */
  id: string | null;
}

/**
 * Sends every request at its scheduled time (open loop: late answers never hold back the next
 * send) over a pool of `connections` kept-alive connections opened beforehand, and answers when
 * every request is answered. A request due while every connection is busy waits in this
 * process's queue; latency is measured from the scheduled time, so that wait (and any lateness
 * of this process's timer) counts against the server, never hides. The pool is opened first
 * because hundreds of connections opened within a second overflow the server's accept queue,
 * and the kernel's SYN retries (1 s, 3 s, 7 s) would then dominate every figure (seen in the
 * first runs).
 *
 * The requests are built before the start, byte for byte what node's http client sent for them
 * (the same request line, headers and body), and written on plain sockets
 * (`RawHttpConnection`), so the sender's CPU, on the same cores as the server, is spent on the
 * schedule and little else.
 */
export async function sendOnSchedule(
  baseUrls: string[],
  schedule: Scheduled[],
  connections: number,
): Promise<{ startAt: number; answers: Answer[] }> {
  // Request i goes to baseUrls[i % n], each server with its share of the connections.
  const perServer = Math.max(1, Math.floor(connections / baseUrls.length));
  const targets = baseUrls.map((baseUrl) => new URL(baseUrl));
  const free: RawHttpConnection[][] = await Promise.all(
    targets.map((url) => Promise.all(Array.from({ length: perServer }, () => openChecked(url)))),
  );
  const open: RawHttpConnection[] = free.flat();
  const requests = schedule.map((item, i) => buildRequest(targets[i % targets.length]!, item));
  const startAt = now() + 100;
  const answers: Answer[] = schedule.map((item) => ({
    scheduledAt: startAt + item.at,
    sentAt: NaN,
    answeredAt: NaN,
    status: 0,
    id: null,
  }));
  const queued: number[][] = targets.map(() => []);
  const reopening = targets.map(() => 0);
  let next = 0;
  let pending = schedule.length;
  return await new Promise((resolve) => {
    const finish = () => {
      if (--pending === 0) {
        for (const connection of open) connection.close();
        resolve({ startAt, answers });
      }
    };
    const send = (index: number, connection: RawHttpConnection) => {
      const server = index % targets.length;
      answers[index]!.sentAt = now();
      connection.send(requests[index]!, (answer) => {
        settle(index, answer);
        if (connection.alive) release(server, connection);
        else replace(server);
      });
    };
    const settle = (index: number, raw: RawAnswer | null) => {
      if (raw !== null) {
        const answer = answers[index]!;
        answer.answeredAt = raw.headAt;
        answer.status = raw.status;
        if (raw.status === 202) answer.id = idOf(raw.body);
      }
      finish();
    };
    const release = (server: number, connection: RawHttpConnection) => {
      const waiting = queued[server]!.shift();
      if (waiting === undefined) free[server]!.push(connection);
      else send(waiting, connection);
    };
    const dispatch = (index: number) => {
      const server = index % targets.length;
      const connection = free[server]!.pop();
      if (connection !== undefined) send(index, connection);
      else if (open.some((c) => c.alive) || reopening[server]! > 0) queued[server]!.push(index);
      else settle(index, null);
    };
    // A connection the server closed (or that failed) is replaced, so the queue keeps moving;
    // if no connection can be had, what waits for one fails.
    const replace = (server: number) => {
      reopening[server]!++;
      RawHttpConnection.open(targets[server]!.hostname, Number(targets[server]!.port))
        .then((connection) => {
          open.push(connection);
          reopening[server]!--;
          release(server, connection);
        })
        .catch(() => {
          reopening[server]!--;
          if (reopening[server] === 0 && !free[server]!.some((c) => c.alive) && !open.some((c) => c.alive)) {
            for (const index of queued[server]!.splice(0)) settle(index, null);
          }
        });
    };
    // Everything due is sent, then a timer to the next due time: at 5,000 requests a second one
    // timer turn sends a few at a time, at most about a millisecond late (counted against the
    // server). A spin of setImmediate turns in the last millisecond kept one core busy all second.
    const tick = () => {
      const t = now();
      while (next < schedule.length && startAt + schedule[next]!.at <= t) dispatch(next++);
      if (next < schedule.length) setTimeout(tick, Math.max(0, startAt + schedule[next]!.at - now()));
    };
    tick();
  });
}

/** Opens a connection and checks the server answers on it (GET /healthz), so it is accepted and ready before the start. */
async function openChecked(url: URL): Promise<RawHttpConnection> {
  const connection = await RawHttpConnection.open(url.hostname, Number(url.port));
  const request = Buffer.from(`GET /healthz HTTP/1.1\r\nHost: ${url.host}\r\nConnection: keep-alive\r\n\r\n`, 'latin1');
  const status = await new Promise<number>((resolve) =>
    connection.send(request, (answer) => resolve(answer?.status ?? 0)),
  );
  if (status !== 200) throw new Error(`${url.origin}/healthz did not answer 200 on a new connection`);
  return connection;
}

/** The request node's http client sent for it: same request line, headers (and their order) and body. */
function buildRequest(target: URL, item: Scheduled): Buffer {
  const body = Buffer.from(item.body);
  const head =
    `POST ${item.path} HTTP/1.1\r\ncontent-type: text/plain\r\ncontent-length: ${body.length}\r\n` +
    `Host: ${target.host}\r\nConnection: keep-alive\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

/** The `id` of a 202's JSON body, the first member signalgate writes. */
function idOf(body: Buffer): string | null {
  const text = body.toString('utf8');
  const start = text.indexOf('"id":"');
  if (start < 0) return null;
  const end = text.indexOf('"', start + 6);
  return end < 0 ? null : text.slice(start + 6, end);
}
