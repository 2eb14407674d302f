import http from 'node:http';
import { performance } from 'node:perf_hooks';

/** One inbound request of an open-loop schedule: sent `at` ms after the start whatever came before. */
export interface Scheduled {
  at: number;
  path: string;
  body: string;
}

export interface Answer {
  scheduledAt: number;
  /** Epoch ms the answer's head arrived; NaN when the request failed. */
  answeredAt: number;
  status: number;
  /** The signal id of a 202. */
  id: string | null;
}

/** Epoch milliseconds to the microsecond, comparable across the processes of one machine. */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * Sends every request at its scheduled time (open loop: late answers never hold back the next
 * send) over a pool of `connections` kept-alive connections opened beforehand, and answers when
 * every request is answered. A request due while every connection is busy waits in this
 * process's queue; latency is measured from the scheduled time, so that wait counts against the
 * server, never hides. The pool is opened first because hundreds of connections opened within
 * a second overflow the server's accept queue, and the kernel's SYN retries (1 s, 3 s, 7 s)
 * would then dominate every figure (seen in the first runs).
 */
export async function sendOnSchedule(baseUrls: string[], schedule: Scheduled[], connections: number): Promise<{ startAt: number; answers: Answer[] }> {
  // Request i goes to baseUrls[i % n], each server with its share of the connections.
  const perServer = Math.max(1, Math.floor(connections / baseUrls.length));
  const agents = baseUrls.map(() => new http.Agent({ keepAlive: true, maxSockets: perServer }));
  await Promise.all(
    baseUrls.flatMap((baseUrl, s) =>
      Array.from(
        { length: perServer },
        () =>
          new Promise<void>((resolve, reject) => {
            http.get(`${baseUrl}/healthz`, { agent: agents[s] }, (res) => res.resume().on('end', resolve)).on('error', reject);
          }),
      ),
    ),
  );
  const startAt = now() + 100;
  const answers: Answer[] = new Array<Answer>(schedule.length);
  let next = 0;
  let pending = schedule.length;
  return await new Promise((resolve) => {
    const finish = () => {
      if (--pending === 0) {
        for (const agent of agents) agent.destroy();
        resolve({ startAt, answers });
      }
    };
    const send = (index: number) => {
      const item = schedule[index]!;
      const answer: Answer = { scheduledAt: startAt + item.at, answeredAt: NaN, status: 0, id: null };
      answers[index] = answer;
      const server = index % baseUrls.length;
      const req = http.request(`${baseUrls[server]}${item.path}`, {
        method: 'POST',
        agent: agents[server],
        headers: { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(item.body) },
      });
      req.on('response', (res) => {
        answer.answeredAt = now();
        answer.status = res.statusCode ?? 0;
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => {
          if (answer.status === 202) answer.id = (JSON.parse(text) as { id: string }).id;
          finish();
        });
      });
      req.on('error', () => finish());
      req.end(item.body);
    };
    const tick = () => {
      const t = now();
      while (next < schedule.length && startAt + schedule[next]!.at <= t) send(next++);
      if (next < schedule.length) {
        const wait = startAt + schedule[next]!.at - now();
        // Timers are coarse (1 ms); the last millisecond is spent on setImmediate turns.
        if (wait > 2) setTimeout(tick, wait - 1);
        else setImmediate(tick);
      }
    };
    tick();
  });
}
