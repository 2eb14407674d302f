import type { Writable } from 'node:stream';

/**
 * Gathers what one turn of the event loop sends on a WebSocket's socket into one write: an
 * agent's acks for a journal write's signals, the server's answers to a group commit's acks.
 * Written one by one, each message was a system call and a TCP segment of its own, to send and
 * to receive, the largest per-signal cost of both processes at a sustained rate
 * (decision h5-sustained-paper-rate). The messages and their order are unchanged.
 */
export class CoalescedWrites {
  private held = false;

  constructor(private readonly socket: Writable) {}

  /** Called before each send: the turn's first corks the socket, and it is uncorked once the turn's I/O is done. */
  hold(): void {
    if (this.held || this.socket.destroyed) return;
    this.held = true;
    this.socket.cork();
    setImmediate(() => {
      this.held = false;
      this.socket.uncork();
    });
  }
}
