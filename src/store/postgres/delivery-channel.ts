import pg from 'pg';

/** The one NOTIFY channel; the payload says which schema (store) and instance it is from. */
export const DELIVERY_CHANNEL = 'signalgate_deliveries';

/** Payload of one notification: scope (schema), instance id, agent ids. */
export interface DeliveryNotice {
  s: string;
  i: string;
  a: string[];
}

/** PostgreSQL refuses payloads of 8000 bytes or more; stay well below. */
const MAX_PAYLOAD_BYTES = 7000;

/** The payloads announcing `agentIds`, split so none is too large for NOTIFY. */
export function deliveryPayloads(scope: string, instance: string, agentIds: string[]): string[] {
  const payloads: string[] = [];
  let batch: string[] = [];
  const encode = (ids: string[]) => JSON.stringify({ s: scope, i: instance, a: ids } satisfies DeliveryNotice);
  for (const id of agentIds) {
    if (batch.length > 0 && Buffer.byteLength(encode([...batch, id])) > MAX_PAYLOAD_BYTES) {
      payloads.push(encode(batch));
      batch = [];
    }
    batch.push(id);
  }
  if (batch.length > 0) payloads.push(encode(batch));
  return payloads;
}

export interface DeliveryChannelOptions {
  /** How to open the dedicated listening connection (search_path included). */
  client: pg.ClientConfig;
  scope: () => string;
  instance: string;
  /** Agents another instance queued deliveries for. */
  onAgents: (agentIds: string[]) => void;
  /** After a reconnect: agents whose notifications may have been lost while not listening. */
  catchUp: (client: pg.Client) => Promise<string[]>;
}

/**
 * A dedicated connection LISTENing for deliveries committed by other instances. It reconnects
 * (with backoff) whenever the connection drops, and after each reconnect reports the agents
 * that still have queued deliveries, since notifications sent while it was down are lost.
 */
export class DeliveryChannel {
  private stopped = false;
  private client: pg.Client | null = null;
  /** Listening, and done reporting what a reconnect may have missed. */
  private ready = false;
  private connections = 0;
  private readonly connectedWaiters: (() => void)[] = [];
  private readonly running: Promise<void>;
  private wake: (() => void) | null = null;

  constructor(private readonly options: DeliveryChannelOptions) {
    this.running = this.run();
  }

  /** How many times the channel has connected and started listening. */
  get listenConnections(): number {
    return this.connections;
  }

  /** Resolves once a connection is listening and caught up (at once when one is). */
  listening(): Promise<void> {
    if (this.ready || this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.connectedWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
    for (const resolve of this.connectedWaiters.splice(0)) resolve();
    this.wake?.();
    await this.running;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      const client = new pg.Client(this.options.client);
      const lost = new Promise<void>((resolve) => {
        // Without an error listener a dropped connection would crash the process.
        client.on('error', () => resolve());
        client.on('end', () => resolve());
      });
      client.on('notification', (message) => this.receive(message.payload));
      try {
        await client.connect();
        await client.query(`LISTEN ${DELIVERY_CHANNEL}`);
        if (this.stopped) break;
        this.client = client;
        this.connections++;
        failures = 0;
        if (this.connections > 1) {
          const missed = await this.options.catchUp(client);
          if (missed.length > 0) this.options.onAgents(missed);
        }
        this.ready = true;
        for (const resolve of this.connectedWaiters.splice(0)) resolve();
        await lost;
      } catch {
        // Connecting or catching up failed: retry below.
      } finally {
        this.ready = false;
        if (this.client === client) this.client = null;
        await client.end().catch(() => undefined);
      }
      if (this.stopped) break;
      failures++;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(100 * 2 ** Math.min(failures, 6), 5000));
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  private receive(payload: string | undefined): void {
    if (!payload) return;
    let notice: DeliveryNotice;
    try {
      notice = JSON.parse(payload) as DeliveryNotice;
    } catch {
      return;
    }
    // Own commits were announced in-process already; other schemas are other stores.
    if (notice.s !== this.options.scope() || notice.i === this.options.instance) return;
    if (Array.isArray(notice.a) && notice.a.length > 0) this.options.onAgents(notice.a);
  }
}
