/** One signal's delivery to one agent, as the ack endpoints answer it and the signal log shows it. */

/**
 * `halted`: the signal came while the agent's account, the signal's source or the agent itself was
 * halted (or was still queued when the halt came): final, never handed out, not after the release either.
 */
export type DeliveryStatus = 'queued' | 'delivered' | 'executed' | 'rejected' | 'failed' | 'expired' | 'halted';

/** The statuses an agent may acknowledge a signal with. */
export type AckStatus = 'executed' | 'rejected' | 'failed';

/**
 * When the agent carried a signal out, on the agent's clock (ISO 8601), as it acknowledged them:
 * the engine had what it needed and decided; the signal's first order left for the venue; the
 * venue's answer to it arrived; the agent learnt that order was filled (the same answer for a
 * market order filled at once). Null where it did not happen (a refusal sends nothing) and for
 * an agent that does not send them. The venue's own fill times stay in the result's orders.
 */
export interface AckTimings {
  decidedAt: string | null;
  sentAt: string | null;
  venueAckedAt: string | null;
  filledAt: string | null;
}

export const ACK_TIMING_NAMES = ['decidedAt', 'sentAt', 'venueAckedAt', 'filledAt'] as const;

export interface Delivery {
  signalId: string;
  agentId: string;
  /** Position in the agent's queue: 1, 2, 3… in acceptance order. */
  seq: number;
  status: DeliveryStatus;
  expiresAt: string;
  deliveredAt: string | null;
  /** How many times the signal was handed to the agent. */
  attempts: number;
  ackedAt: string | null;
  message: string | null;
  /** What the agent reported with its ack (orders, fills), as it sent it. */
  result: unknown;
  /**
   * Acknowledged when the delivery had already expired (at or after `expiresAt`): the agent
   * may have acted on a late signal.
   */
  ackedAfterExpiry: boolean;
  /** The agent's timings of the signal (see AckTimings); null when its acknowledgement had none. */
  timings: AckTimings | null;
}
