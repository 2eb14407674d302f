/**
 * The one catalog of error codes signalgate answers with. Every problem body, log line and CLI
 * message uses a code from here; the HTTP status and title live beside the code so no caller
 * invents its own mapping.
 */
export const ERROR_CATALOG = {
  // Inbound authentication and transport (docs/inbound-api.md, checks 1–5).
  INVALID_SOURCE_KEY: { status: 401, title: 'Unknown source key' },
  IP_NOT_ALLOWED: { status: 403, title: 'Client address not allowed for this source' },
  SOURCE_INACTIVE: { status: 401, title: 'Source is inactive' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Payload too large' },
  HMAC_MISMATCH: { status: 401, title: 'Signature check failed' },
  SIGNATURE_TIMESTAMP_OUT_OF_RANGE: { status: 401, title: 'Signed timestamp too old or in the future' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type' },
  // The signal language (docs/signal-language.md).
  PARSE_ERROR: { status: 400, title: 'Signal could not be parsed' },
  MISSING_SYMBOL: { status: 422, title: 'Symbol missing' },
  MISSING_ACTION: { status: 422, title: 'Action missing' },
  UNKNOWN_ACTION: { status: 422, title: 'Unknown action' },
  UNKNOWN_PARAMETER: { status: 422, title: 'Unknown parameter' },
  INVALID_VOLUME: { status: 422, title: 'Invalid volume' },
  SL_REQUIRED: { status: 422, title: 'Stop loss required' },
  ENTRY_REQUIRED: { status: 422, title: 'Entry required' },
  INVALID_PARAMETER: { status: 422, title: 'Invalid parameter' },
  // The last entry of a list of problems cut short: how many more there were.
  MORE_PROBLEMS: { status: 422, title: 'More problems than listed' },
  // Metering and replay.
  QUOTA_SIGNALS_IN: { status: 429, title: 'Monthly signal quota exhausted' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, title: 'Idempotency key reused with a different request' },
  // Admin and agent APIs.
  UNAUTHORIZED: { status: 401, title: 'Missing or wrong bearer token' },
  TOO_MANY_WRONG_TOKENS: { status: 429, title: 'Too many wrong tokens from this address' },
  CROSS_ORIGIN: { status: 403, title: 'Cross-origin request refused' },
  NOT_FOUND: { status: 404, title: 'Not found' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method not allowed' },
  INVALID_REQUEST: { status: 400, title: 'Invalid request' },
  INVALID_FIELD: { status: 422, title: 'Invalid field' },
  ALREADY_ACKNOWLEDGED: { status: 409, title: 'Signal already acknowledged' },
  SIGNAL_EXPIRED: { status: 409, title: 'Signal expired before delivery' },
  SIGNAL_NOT_DELIVERED: { status: 409, title: 'Signal not delivered yet' },
  AGENT_CONNECTED: { status: 409, title: 'Agent already connected elsewhere' },
  AGENT_ROUTED: { status: 409, title: 'Agent is routed to by a source' },
  // An agent's refusal of an entry that breaks its account's risk rules (the ack's result.code; docs/agents.md).
  RISK_LIMIT: { status: 422, title: 'Risk limit reached' },
  // Server side.
  SHUTTING_DOWN: { status: 503, title: 'Server is shutting down' },
  STORE_UNAVAILABLE: { status: 503, title: 'Store unavailable' },
  INTERNAL_ERROR: { status: 500, title: 'Internal error' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

/**
 * Every code by name, for code that answers with one: `ErrorCode.NOT_FOUND`. Outside this folder
 * a code is never written as a string literal, so a misspelt name is a type error rather than a
 * new code on the wire.
 */
export const ErrorCode = Object.freeze(Object.fromEntries(Object.keys(ERROR_CATALOG).map((code) => [code, code]))) as {
  readonly [Code in ErrorCode]: Code;
};

/** One problem found in a request: what is wrong, with which parameter, and what to do. */
export interface Problem {
  code: ErrorCode;
  detail: string;
  param?: string;
}

export function statusOf(code: ErrorCode): number {
  return ERROR_CATALOG[code].status;
}

export function titleOf(code: ErrorCode): string {
  return ERROR_CATALOG[code].title;
}
