import { ErrorCode, type Problem } from '../errors/catalog.js';
import { jsonShapeExcess, MAX_JSON_NESTING, MAX_JSON_VALUES } from '../language/index.js';

/** The largest JSON body of the admin, agent and dashboard APIs, and the largest agent WebSocket message. */
export const MAX_JSON_BODY_BYTES = 64 * 1024;

/**
 * What a JSON body or agent message (`what`) of `bytes` bytes and text `text` is refused with,
 * before it is parsed: larger than `MAX_JSON_BODY_BYTES`, nested deeper than `MAX_JSON_NESTING`,
 * or holding more than `MAX_JSON_VALUES` values. Null when it is within all three. The one check
 * every JSON the server takes from an agent, an administrator or the dashboard goes through.
 */
export function jsonBodyProblem(text: string, bytes: number, what: 'body' | 'message'): Problem | null {
  if (bytes > MAX_JSON_BODY_BYTES) {
    return {
      code: ErrorCode.PAYLOAD_TOO_LARGE,
      detail: `the ${what} has ${bytes} bytes, more than the ${MAX_JSON_BODY_BYTES} a ${what} may hold; send less at once`,
    };
  }
  const excess = jsonShapeExcess(text);
  if (excess === null) return null;
  const where = excess.key === null ? '' : ` in '${excess.key}'`;
  const param = excess.key === null ? {} : { param: excess.key };
  if (excess.kind === 'depth') {
    return {
      code: ErrorCode.INVALID_REQUEST,
      ...param,
      detail: `the ${what} is nested more than ${MAX_JSON_NESTING} levels deep${where} (objects and lists within each other, the ${what} itself being level 1); send a flatter ${what}`,
    };
  }
  return {
    code: ErrorCode.PAYLOAD_TOO_LARGE,
    ...param,
    detail: `the ${what} holds more than ${MAX_JSON_VALUES} values${where} (list elements and object members); send fewer at once`,
  };
}
