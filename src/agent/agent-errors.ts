/** The server refused the agent token (401): retrying cannot help, so the client stops. */
export class AgentUnauthorizedError extends Error {
  constructor(
    detail = 'the server refused the agent token (401); check the token given in SIGNALGATE_AGENT_TOKEN, --token-file or --token',
  ) {
    super(detail);
    this.name = 'AgentUnauthorizedError';
  }
}

/**
 * The agent cannot work with what answers at --server, and retrying cannot help: a certificate
 * it does not trust, or something that is not a signalgate server. Told as what to fix, not as
 * an outage, so the client stops.
 */
export class AgentSetupError extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = 'AgentSetupError';
  }
}

/**
 * The server answered a poll 409 AGENT_CONNECTED: another process holds this agent's WebSocket
 * session. Not a failure to report as one: the client stands by until that session ends.
 */
export class AgentConnectedError extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = 'AgentConnectedError';
  }
}

/** The client was closed while an operation still waited for the server. */
export class AgentClosedError extends Error {
  constructor() {
    super('the agent client was closed');
    this.name = 'AgentClosedError';
  }
}

/** A failure worth retrying: the server could not be reached, went away, or failed (5xx). */
export class TransientError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TransientError';
  }
}

/**
 * No answer from the server at all (connection refused, name not found, timed out): the
 * server is down or the URL is wrong, unlike a server that answers with an error.
 */
export class ServerUnreachableError extends TransientError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ServerUnreachableError';
  }
}
