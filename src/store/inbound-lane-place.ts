/**
 * Where a backend's inbound requests are best checked and committed. The backend names the
 * place and src/inbound starts the lane (`startInboundLane`), so the store never imports the
 * lanes that run inbound's checks.
 */
export type InboundLanePlace =
  /** On the event loop, against the service's own store. */
  | { kind: 'event-loop' }
  /** On a thread of its own, with its own connection to the embedded store in `dataDir`. */
  | {
      kind: 'thread';
      dataDir: string;
      /** Agents with new deliveries the thread committed: the service's store wakes their watchers. */
      announceDeliveries(agentIds: string[]): void;
      /** The thread runs: its commits checkpoint the WAL from now on, not the event loop's. */
      threadStarted(): void;
    };
