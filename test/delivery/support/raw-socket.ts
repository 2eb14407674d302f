import WebSocket from 'ws';

/** A bare WebSocket client speaking the push protocol by hand, as a connector author would. */
export class RawSocket {
  readonly messages: any[] = [];
  private waiters: Array<() => void> = [];
  private nextRef = 1;
  closeCode: number | null = null;
  closeReason = '';
  readonly closed: Promise<number>;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.messages.push(JSON.parse(data.toString()));
      this.wake();
    });
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => {
        this.closeCode = code;
        this.closeReason = reason.toString();
        this.wake();
        resolve(code);
      }),
    );
  }

  static open(url: string, token: string): Promise<RawSocket> {
    const ws = new WebSocket(`${url.replace('http', 'ws')}/api/agent/ws`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const socket = new RawSocket(ws);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(socket));
      ws.once('error', reject);
    });
  }

  /** Waits for the first message (from `from` on) that matches. */
  async next(match: (message: any) => boolean, from = 0): Promise<any> {
    while (true) {
      const found = this.messages.slice(from).find(match);
      if (found) return found;
      if (this.closeCode !== null) throw new Error(`socket closed (${this.closeCode}) while waiting`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Every signal pushed so far, in order. */
  signals(): any[] {
    return this.messages.filter((m) => m.type === 'signals').flatMap((m) => m.signals);
  }

  async waitForSignals(count: number): Promise<any[]> {
    await this.next(() => this.signals().length >= count);
    return this.signals();
  }

  /** Sends a message with a fresh ref and answers the server's result for it. */
  async request(message: object): Promise<any> {
    const ref = `r${this.nextRef++}`;
    this.ws.send(JSON.stringify({ ...message, ref }));
    return this.next((m) => m.type === 'result' && m.ref === ref);
  }

  sendRaw(text: string): void {
    this.ws.send(text);
  }

  close(): void {
    this.ws.close();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
