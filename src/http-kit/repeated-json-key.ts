import { readJsonObject } from '../language/index.js';

/**
 * The first key that the one JSON object `text` gives twice at its top level or, with
 * `within`, inside the object held by its member `within` (as `within.key`); null when none is,
 * or when `text` is not one object. `JSON.parse` keeps the last of two equal keys silently, so
 * an ack naming two statuses would pass as whichever came last.
 */
export function repeatedJsonKey(text: string, within?: string): string | null {
  const reading = readJsonObject(text);
  if (!reading.ok) return null;
  const seen = new Set<string>();
  for (const { key, value } of reading.members) {
    if (seen.has(key)) return key;
    seen.add(key);
    if (key === within && value.kind === 'object') {
      const inner = repeatedJsonKey(value.text);
      if (inner !== null) return `${key}.${inner}`;
    }
  }
  return null;
}

/** What a body or message giving `key` twice is told. */
export function repeatedKeyDetail(key: string): string {
  return `'${key}' is given more than once; send each field once`;
}
