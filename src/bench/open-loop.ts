import http from 'node:http';
import { performance } from 'node:perf_hooks';

/** One inbound request of an open-loop schedule: sent at `at` (epoch ms) whatever came before. */
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
 * send), each on a connection of its own or a free kept-alive one, as webhook senders do, and
 * answers when every request is answered. Latency is measured from the scheduled time, so time
 * a request waits for this process to send it counts against the server, never hides.
 */
export function sendOnSchedule(baseUrl: string, schedule: Scheduled[]): Promise<Answer[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const answers: Answer[] = new Array<Answer>(schedule.length);
  let next = 0;
  let pending = schedule.length;
  return new Promise((resolve) => {
    const finish = () => {
      if (--pending === 0) {
        agent.destroy();
        resolve(answers);
      }
    };
    const send = (index: number) => {
      const item = schedule[index]!;
      const answer: Answer = { scheduledAt: item.at, answeredAt: NaN, status: 0, id: null };
      answers[index] = answer;
      const req = http.request(`${baseUrl}${item.path}`, {
        method: 'POST',
        agent,
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
      while (next < schedule.length && schedule[next]!.at <= t) send(next++);
      if (next < schedule.length) {
        const wait = schedule[next]!.at - now();
        // Timers are coarse (1 ms); the last millisecond is spent on setImmediate turns.
        if (wait > 2) setTimeout(tick, wait - 1);
        else setImmediate(tick);
      }
    };
    tick();
  });
}
