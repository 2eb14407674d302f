import type { Exchange, Order } from 'ccxt';

/** The first wait before reconnecting after a stream error; doubled at each error in a row. */
const RECONNECT_FIRST_MS = 500;
/** The longest wait between reconnection attempts. */
const RECONNECT_MAX_MS = 30_000;

export interface PrivateStreamStatus {
  state: 'connecting' | 'connected' | 'reconnecting' | 'stopped';
  /** Connections opened so far (the first one included). */
  connections: number;
  /** The last error, while it is not connected. */
  lastError?: string;
}

export interface PrivateStreamHandlers {
  /** Order updates of the account, as CCXT parsed them (newest state of each order). */
  orders(orders: Order[]): void;
  /** A connection opened: what happened while there was none is known only by reading the account. */
  opened(): void;
  /** The stream failed; `first`: the first failure since it last worked (said once, not at every retry). */
  failed(message: string, first: boolean): void;
}

/**
 * The exchange's private stream of the account's orders, through CCXT's `watchOrders` (its pro
 * classes, shipped in the same `ccxt` package): a loop that hands each batch of updates on and
 * reconnects after an error, waiting RECONNECT_FIRST_MS doubled at each failure in a row up to
 * RECONNECT_MAX_MS. CCXT keeps the stream's credential alive (Binance: a PUT of the listenKey
 * every 20 minutes; Bybit signs an auth on each connection); after an error the credential is
 * asked again, so an expired one is replaced.
 * Nothing it does can stop the agent: errors are told through `failed` and retried.
 */
export class CcxtPrivateStream {
  private stopped = false;
  private state: PrivateStreamStatus['state'] = 'connecting';
  private connections = 0;
  private lastError: string | null = null;
  private failures = 0;
  private wake: (() => void) | null = null;

  constructor(
    private readonly exchange: Exchange,
    private readonly params: Record<string, unknown>,
    private readonly handlers: PrivateStreamHandlers,
  ) {
    // Bybit's stream carries the account's orders only once the connection is authenticated and
    // subscribed: it counts as open at the subscription's acknowledgement, not at the socket's.
    const subscribes = exchange.id === 'bybit';
    // CCXT's hook for a websocket that opened (read when it makes a connection, so set before any).
    const opened = exchange.onConnected.bind(exchange);
    exchange.onConnected = ((client: unknown, message?: unknown) => {
      opened(client as never, message as never);
      if (!subscribes) this.open();
    }) as Exchange['onConnected'];
    // Binance says `listenKeyExpired` and then sends nothing more on that connection, which stays
    // open; CCXT ignores the event. Closing the connections makes the loop ask for a key again.
    const handle = exchange.handleMessage.bind(exchange);
    exchange.handleMessage = ((client: unknown, message: unknown) => {
      if ((message as { e?: unknown } | null)?.e === 'listenKeyExpired' && !this.stopped) {
        void exchange.close().catch(() => undefined);
        return;
      }
      handle(client as never, message as never);
      const ack = message as { op?: unknown; success?: unknown } | null;
      if (subscribes && ack?.op === 'subscribe' && ack.success === true) this.open();
    }) as Exchange['handleMessage'];
  }

  /** A connection is open and carries the account's orders. */
  private open(): void {
    if (this.stopped) return;
    this.connections += 1;
    this.state = 'connected';
    this.lastError = null;
    this.handlers.opened();
  }

  start(): void {
    void this.run();
  }

  status(): PrivateStreamStatus {
    return {
      state: this.state,
      connections: this.connections,
      ...(this.lastError !== null && this.state !== 'connected' && { lastError: this.lastError }),
    };
  }

  stop(): void {
    this.stopped = true;
    this.state = 'stopped';
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        const orders = await this.exchange.watchOrders(undefined, undefined, undefined, this.params);
        if (this.stopped) return;
        this.failures = 0;
        this.handlers.orders(orders);
      } catch (error) {
        if (this.stopped) return;
        const message = (error as Error).message;
        this.failures += 1;
        this.state = 'reconnecting';
        this.lastError = message;
        this.handlers.failed(message, this.failures === 1);
        // The next attempt dials afresh (CCXT would reuse a connection it still holds for the
        // URL) and asks for the credential again, so one that expired or was closed is replaced.
        await this.exchange.close().catch(() => undefined);
        this.forgetCredential();
        await this.pause(Math.min(RECONNECT_MAX_MS, RECONNECT_FIRST_MS * 2 ** (this.failures - 1)));
      }
    }
  }

  /**
   * CCXT's Binance keeps the listenKey with the time it was asked (`options[type]`), and asks
   * again only 20 minutes later: after a failure it is asked now (POST answers the active key,
   * extended, or a new one).
   */
  private forgetCredential(): void {
    for (const type of ['future', 'delivery', 'spot', 'margin']) {
      const bucket = this.exchange.options[type] as { lastAuthenticatedTime?: number } | undefined;
      if (bucket !== undefined && typeof bucket === 'object' && 'lastAuthenticatedTime' in bucket)
        bucket.lastAuthenticatedTime = 0;
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      timer.unref?.();
      this.wake = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
    });
  }
}
