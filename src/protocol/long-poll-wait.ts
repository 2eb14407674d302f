/**
 * The longest an agent's long-poll (`GET /api/agent/signals?wait=`) is held, in seconds: the
 * bound the server enforces, and the window in which the metrics count a polling agent connected.
 */
export const MAX_WAIT_SECONDS = 30;
