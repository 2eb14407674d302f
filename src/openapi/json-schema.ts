/**
 * The JSON Schema (2020-12, as OpenAPI 3.1 uses it) a request part or an answer is declared
 * with. Only the keywords signalgate uses are typed, so a misspelt keyword is a type error
 * rather than a constraint that silently does nothing.
 */
export interface JsonSchema {
  type?: JsonType | JsonType[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  patternProperties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  maxItems?: number;
  uniqueItems?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  enum?: ReadonlyArray<string | number | boolean | null>;
  const?: string | number | boolean;
  format?: string;
  default?: unknown;
  examples?: unknown[];
  oneOf?: JsonSchema[];
}

export type JsonType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean' | 'null';

/** A JSON object with exactly these fields; `required` lists those that must be given. */
export interface ObjectSchema extends JsonSchema {
  type: 'object';
  properties: Record<string, JsonSchema>;
  additionalProperties: boolean;
}

/** An object of the named fields; anything else in it is refused (`additionalProperties: false`). */
export function objectSchema(
  properties: Record<string, JsonSchema>,
  required: string[] = [],
  description?: string,
): ObjectSchema {
  return {
    type: 'object',
    ...(description === undefined ? {} : { description }),
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}

/** Whether the schema lets `null` through (`type: [..., 'null']`). */
export function allowsNull(schema: JsonSchema): boolean {
  return Array.isArray(schema.type) && schema.type.includes('null');
}
