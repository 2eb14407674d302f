/** One signal's delivery to one agent, as the ack endpoints answer it and the signal log shows it. */

export type DeliveryStatus = 'queued' | 'delivered' | 'executed' | 'rejected' | 'failed' | 'expired';

/** The statuses an agent may acknowledge a signal with. */
export type AckStatus = 'executed' | 'rejected' | 'failed';

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
}
