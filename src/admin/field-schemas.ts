import type { JsonSchema } from '../openapi/index.js';

/**
 * The schemas of the kinds of admin field FieldReader reads. The pattern states what the reader
 * checks for text (not blank, no control characters) so that a client validating against the
 * published document refuses what the server would.
 */
export function textField(maxLength: number, description: string, example: string): JsonSchema {
  return {
    type: 'string',
    description,
    minLength: 1,
    maxLength,
    pattern: '^[^\\u0000-\\u001f\\u007f]*\\S[^\\u0000-\\u001f\\u007f]*$',
    examples: [example],
  };
}

export function wholeNumberField(minimum: number, maximum: number, description: string, example: number): JsonSchema {
  return { type: 'integer', description, minimum, maximum, examples: [example] };
}

export function idListField(maxItems: number, description: string, example: string): JsonSchema {
  return { type: 'array', description, items: { type: 'string', minLength: 1 }, maxItems, examples: [[example]] };
}

export function booleanField(description: string): JsonSchema {
  return { type: 'boolean', description, examples: [true] };
}
