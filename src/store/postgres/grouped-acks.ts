import type pg from 'pg';
import type { Ack } from '../store.js';
import { isoTime } from '../iso-time.js';
import { jsonParam, textParam, type DeliveryRow } from './postgres-rows.js';

interface PendingAck {
  agentId: string;
  signalId: string;
  ack: Ack;
  now: string;
  resolve: (row: DeliveryRow | null) => void;
  reject: (error: unknown) => void;
}

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
    return new Promise((resolve, reject) => {
      this.queue.push({ agentId, signalId, ack, now, resolve, reject });
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
      const { rows } = await this.pool.query<DeliveryRow>(
        `UPDATE deliveries d
            SET status = a.status, acked_at = a.acked_at, message = a.message, result = a.result,
                acked_after_expiry = (d.status = 'expired' OR d.expires_at <= a.acked_at)
           FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::json[])
                AS a (signal_id, agent_id, status, acked_at, message, result)
          WHERE d.signal_id = a.signal_id AND d.agent_id = a.agent_id
            AND (d.status = 'delivered' OR (d.status = 'expired' AND d.delivered_at IS NOT NULL))
         RETURNING d.*`,
        [
          group.map((p) => p.signalId),
          group.map((p) => p.agentId),
          group.map((p) => p.ack.status),
          group.map((p) => isoTime(p.now)),
          group.map((p) => textParam(p.ack.message)),
          group.map((p) => jsonParam(p.ack.result)),
        ],
      );
      const updated = new Map(rows.map((row) => [`${row.signal_id}\n${row.agent_id}`, row]));
      for (const pending of group) pending.resolve(updated.get(`${pending.signalId}\n${pending.agentId}`) ?? null);
    } catch (error) {
      for (const pending of group) pending.reject(error);
    }
  }
}
