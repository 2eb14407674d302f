/**
 * What the client library logs through: pino's logger fits, and so does anything with these
 * three methods. Log lines never carry the token.
 */
export interface AgentLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export const silentLog: AgentLog = { info() {}, warn() {}, error() {} };
