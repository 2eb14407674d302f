import { ErrorCode, type Problem } from '../errors/catalog.js';
import { unknownNames } from '../errors/unknown-names.js';

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Reads the fields of an admin request body, collecting every problem instead of stopping at
 * the first, and refusing fields it was not asked about (a typo must not pass as "not given").
 */
export class FieldReader {
  readonly problems: Problem[] = [];
  private readonly seen = new Set<string>();
  private readonly body: Record<string, unknown>;

  constructor(body: unknown) {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      this.problems.push({ code: ErrorCode.INVALID_REQUEST, detail: 'the request body must be a JSON object' });
      this.body = {};
    } else {
      this.body = body as Record<string, unknown>;
    }
  }

  has(name: string): boolean {
    this.seen.add(name);
    return Object.hasOwn(this.body, name);
  }

  /** The field's value as sent, for a reader of its own; undefined when absent. */
  given(name: string): unknown {
    return this.has(name) ? this.body[name] : undefined;
  }

  string(name: string, opts: { required: boolean; max: number; nullable?: boolean }): string | null | undefined {
    if (!this.has(name)) {
      if (opts.required) this.fail(name, `'${name}' is required`);
      return undefined;
    }
    const value = this.body[name];
    if (value === null && opts.nullable) return null;
    if (typeof value !== 'string' || value.trim() === '' || value.length > opts.max || CONTROL.test(value)) {
      this.fail(name, `'${name}' must be a non-empty string of at most ${opts.max} characters, without control characters`);
      return undefined;
    }
    return value;
  }

  integer(name: string, opts: { required: boolean; min: number; max: number }): number | undefined {
    if (!this.has(name)) {
      if (opts.required) this.fail(name, `'${name}' is required`);
      return undefined;
    }
    const value = this.body[name];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < opts.min || value > opts.max) {
      this.fail(name, `'${name}' must be a whole number from ${opts.min} to ${opts.max}`);
      return undefined;
    }
    return value;
  }

  boolean(name: string): boolean | undefined {
    if (!this.has(name)) return undefined;
    const value = this.body[name];
    if (typeof value !== 'boolean') {
      this.fail(name, `'${name}' must be true or false`);
      return undefined;
    }
    return value;
  }

  stringList(name: string, opts: { max: number }): string[] | undefined {
    if (!this.has(name)) return undefined;
    const value = this.body[name];
    if (!Array.isArray(value) || value.length > opts.max || !value.every((v) => typeof v === 'string' && v !== '')) {
      this.fail(name, `'${name}' must be a list of at most ${opts.max} ids`);
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
}
