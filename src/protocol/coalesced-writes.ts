import type { Writable } from 'node:stream';

/**
 * Gathers what one callback and its promise jobs send on a WebSocket's socket into one write:
 * an agent's acks for a journal write's signals, the server's answers to a group commit's acks.
 * Written one by one, each message was a system call and a TCP segment of its own, to send and
 * to receive, a large per-signal cost of both processes at a sustained rate (decision
 * 0056-sustained-paper-rate). The messages and their order are unchanged.
 */
export class CoalescedWrites {
  private held = false;

  constructor(private readonly socket: Writable) {}

  /**
   * Called before each send: the first corks the socket, which is uncorked once the callback
   * under way and its promise jobs have run (what a commit or a journal write settles), so
   * nothing waits for other I/O.
   */
  hold(): void {
    if (this.held || this.socket.destroyed) return;
    this.held = true;
    this.socket.cork();
    process.nextTick(() => {
      this.held = false;
      this.socket.uncork();
    });
  }
}
