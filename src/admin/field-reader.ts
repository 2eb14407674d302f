import { ErrorCode, type Problem } from '../errors/catalog.js';
import { unknownNames } from '../errors/unknown-names.js';
import { allowsNull, type JsonSchema, type ObjectSchema } from '../openapi/index.js';

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Reads the fields of an admin request body, collecting every problem instead of stopping at
 * the first, and refusing fields it was not asked about (a typo must not pass as "not given").
 *
 * It is driven by the body's schema, the one GET /api/openapi.json publishes: whether a field
 * is required, its length, range and list limits come from there, and a field the schema does
 * not declare cannot be read at all. A declared field the code never reads is refused as
 * unknown, which the schema-generated test in test/http/openapi.test.ts catches.
 */
export class FieldReader {
  readonly problems: Problem[] = [];
  private readonly seen = new Set<string>();
  private readonly body: Record<string, unknown>;

  constructor(
    body: unknown,
    private readonly schema: ObjectSchema,
  ) {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      this.problems.push({ code: ErrorCode.INVALID_REQUEST, detail: 'the request body must be a JSON object' });
      this.body = {};
    } else {
      this.body = body as Record<string, unknown>;
    }
  }

  has(name: string): boolean {
    this.declared(name);
    this.seen.add(name);
    return Object.hasOwn(this.body, name);
  }

  /** The field's value as sent, for a reader of its own; undefined when absent. */
  given(name: string): unknown {
    return this.has(name) ? this.body[name] : undefined;
  }

  /** A text field: not blank, no control characters, at most the schema's `maxLength`. */
  string(name: string): string | null | undefined {
    const schema = this.declared(name);
    if (!this.present(name)) return undefined;
    const value = this.body[name];
    if (value === null && allowsNull(schema)) return null;
    const max = limit(name, schema.maxLength);
    if (typeof value !== 'string' || value.trim() === '' || value.length > max || CONTROL.test(value)) {
      this.fail(name, `'${name}' must be a non-empty string of at most ${max} characters, without control characters`);
      return undefined;
    }
    return value;
  }

  integer(name: string): number | undefined {
    const schema = this.declared(name);
    if (!this.present(name)) return undefined;
    const value = this.body[name];
    const min = limit(name, schema.minimum);
    const max = limit(name, schema.maximum);
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      this.fail(name, `'${name}' must be a whole number from ${min} to ${max}`);
      return undefined;
    }
    return value;
  }

  boolean(name: string): boolean | undefined {
    if (!this.present(name)) return undefined;
    const value = this.body[name];
    if (typeof value !== 'boolean') {
      this.fail(name, `'${name}' must be true or false`);
      return undefined;
    }
    return value;
  }

  stringList(name: string): string[] | undefined {
    const max = limit(name, this.declared(name).maxItems);
    if (!this.present(name)) return undefined;
    const value = this.body[name];
    if (!Array.isArray(value) || value.length > max || !value.every((v) => typeof v === 'string' && v !== '')) {
      this.fail(name, `'${name}' must be a list of at most ${max} ids`);
      return undefined;
    }
    return [...new Set(value as string[])];
  }

  /** Refuses every field of the body that no reader asked about. */
  rejectUnknown(): void {
    this.problems.push(...unknownNames(Object.keys(this.body), [...this.seen], 'field'));
  }

  fail(param: string, detail: string): void {
    this.problems.push({ code: ErrorCode.INVALID_FIELD, param, detail });
  }

  /** Whether the field is in the body; a required one that is not is a problem. */
  private present(name: string): boolean {
    if (this.has(name)) return true;
    if (this.schema.required?.includes(name)) this.fail(name, `'${name}' is required`);
    return false;
  }

  private declared(name: string): JsonSchema {
    const schema = this.schema.properties[name];
    if (schema === undefined) throw new Error(`'${name}' is read but not declared in the body's schema; add it there`);
    return schema;
  }
}

function limit(name: string, value: number | undefined): number {
  if (value === undefined) throw new Error(`the schema of '${name}' lacks the limit its reader checks`);
  return value;
}
