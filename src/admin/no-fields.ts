import { ErrorCode, type Problem } from '../errors/catalog.js';
import { FieldReader } from './field-reader.js';
import { objectSchema } from '../openapi/index.js';

const NO_FIELDS = objectSchema({}, [], 'no fields: send no body, or {}');

/**
 * The body of an action that takes no fields (rotate-key, rotate-token): empty or `{}`; any
 * field in it is refused rather than ignored.
 */
export function noFields(body: unknown, action: string): Problem[] {
  if (body === undefined || body === '') return [];
  const fields = new FieldReader(body, NO_FIELDS);
  if (fields.problems.length > 0) return fields.problems;
  return Object.keys(body as object).map((name): Problem => ({
    code: ErrorCode.INVALID_FIELD,
    param: name,
    detail: `unknown field '${name}'; ${action} takes no fields, send an empty body`,
  }));
}
