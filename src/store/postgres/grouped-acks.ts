import type pg from 'pg';
import type { Ack } from '../store.js';
import { isoTime } from '../iso-time.js';
import { jsonParam, textParam, type DeliveryRow } from './postgres-rows.js';
import { againIfRolledBack } from './transaction.js';

interface PendingAck {
  agentId: string;
  signalId: string;
  ack: Ack;
  /** The time, message and result as the statement sends them, written before the ack joined a group. */
  at: string;
  message: string | null;
  resultJson: string | null;
  timingsJson: string | null;
  resolve: (row: DeliveryRow | null) => void;
  reject: (error: unknown) => void;
}

/**
 * The group's rows are locked first, by agent then seq (`COLLATE "C"`: the order of JavaScript's
 * string compare), the order in which the hand-outs lock them (agents sorted by id, each agent's
 * deliveries by seq). Updated in whatever order the join produced, an ack group and a hand-out
 * each holding rows the other wanted deadlocked under a burst: PostgreSQL found it only after
 * `deadlock_timeout` (1 s) and failed one of them, and an ack group's failure answered every ack
 * in it with an error.
 */
const GROUPED_ACKS_SQL = `WITH a AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::json[], $7::json[])
                AS a (signal_id, agent_id, status, acked_at, message, result, timings)
     ), locked AS (
       SELECT d.signal_id, d.agent_id
         FROM deliveries d JOIN a ON d.signal_id = a.signal_id AND d.agent_id = a.agent_id
        WHERE d.status = 'delivered' OR (d.status = 'expired' AND d.delivered_at IS NOT NULL)
        ORDER BY d.agent_id COLLATE "C", d.seq
          FOR UPDATE OF d
     )
     UPDATE deliveries d
        SET status = a.status, acked_at = a.acked_at, message = a.message, result = a.result, timings = a.timings,
            acked_after_expiry = (d.status = 'expired' OR d.expires_at <= a.acked_at)
       FROM locked JOIN a ON a.signal_id = locked.signal_id AND a.agent_id = locked.agent_id
      WHERE d.signal_id = locked.signal_id AND d.agent_id = locked.agent_id
        AND (d.status = 'delivered' OR (d.status = 'expired' AND d.delivered_at IS NOT NULL))
     RETURNING d.*`;

/**
 * The acks of one event-loop turn applied by one statement, so one COMMIT (one WAL flush) serves
 * them all instead of one each: in the burst, 5,000 acks a second each waited for a flush of
 * their own. Each ack still takes effect only if its delivery is handed out and unacknowledged
 * (the conditional update); `apply` answers the updated row, or null when it did not apply and
 * the caller must find out why. An ack for a delivery already in the group waits for the next
 * group, so one statement never updates a row twice.
 */
export class GroupedAcks {
  private queue: PendingAck[] = [];
  private scheduled = false;

  constructor(private readonly pool: pg.Pool) {}

  apply(agentId: string, signalId: string, ack: Ack, now: string): Promise<DeliveryRow | null> {
    // Written here, not when the group runs: an ack that cannot be written (a result nested
    // deeper than the stack) fails alone, instead of failing the group's statement, or worse,
    // throwing in the group's turn, outside any caller.
    let params: Pick<PendingAck, 'at' | 'message' | 'resultJson' | 'timingsJson'>;
    try {
      params = {
        at: isoTime(now),
        message: textParam(ack.message),
        resultJson: jsonParam(ack.result),
        timingsJson: jsonParam(ack.timings),
      };
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ agentId, signalId, ack, ...params, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const group: PendingAck[] = [];
    const later: PendingAck[] = [];
    const keys = new Set<string>();
    for (const pending of this.queue) {
      const key = `${pending.signalId}\n${pending.agentId}`;
      if (keys.has(key)) later.push(pending);
      else {
        keys.add(key);
        group.push(pending);
      }
    }
    this.queue = later;
    if (later.length > 0) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    if (group.length > 0) void this.run(group);
  }

  private async run(group: PendingAck[]): Promise<void> {
    try {
      const values = [
        group.map((p) => p.signalId),
        group.map((p) => p.agentId),
        group.map((p) => p.ack.status),
        group.map((p) => p.at),
        group.map((p) => p.message),
        group.map((p) => p.resultJson),
        group.map((p) => p.timingsJson),
      ];
      // A deadlock's victim is rolled back whole: nothing of the group took effect. Unnamed, as
      // the hand-out (take-deliveries.ts): a generic plan made on a near-empty table outlives it.
      const { rows } = await againIfRolledBack(() => this.pool.query<DeliveryRow>({ text: GROUPED_ACKS_SQL, values }));
      const updated = new Map(rows.map((row) => [`${row.signal_id}\n${row.agent_id}`, row]));
      for (const pending of group) pending.resolve(updated.get(`${pending.signalId}\n${pending.agentId}`) ?? null);
    } catch (error) {
      for (const pending of group) pending.reject(error);
    }
  }
}
