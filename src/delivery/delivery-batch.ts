/**
 * The most deliveries handed out in one answer or kept unacknowledged on one WebSocket: the
 * agent works through them in order, and anything further waits for its acks.
 */
export const DELIVERY_BATCH = 100;
