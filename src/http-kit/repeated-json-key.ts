import { readJsonObject } from '../language/index.js';

/**
 * The first key that the one JSON object `text` gives twice at its top level or, with
 * `within`, inside the object held by its member `within` (as `within.key`); null when none is,
 * or when `text` is not one object. `JSON.parse` keeps the last of two equal keys silently, so
 * an ack naming two statuses would pass as whichever came last. `parsed`, the text's
 * `JSON.parse`, lets most texts be answered without reading them key by key (`eachKeyOnce`).
 */
export function repeatedJsonKey(text: string, within?: string, parsed?: unknown): string | null {
  if (parsed !== undefined && eachKeyOnce(text, parsed, within)) return null;
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

/**
 * True when the text spells each key of the parsed object (and of its member `within`) once,
 * anywhere in it: then no key of theirs is given twice. A key given twice appears twice, unless
 * spelt with escapes, so a text holding a backslash is never answered this way.
 */
function eachKeyOnce(text: string, parsed: unknown, within: string | undefined): boolean {
  if (!isObject(parsed) || text.includes('\\')) return false;
  const once = (object: object) =>
    Object.keys(object).every((key) => {
      const quoted = `"${key}"`;
      const at = text.indexOf(quoted);
      return at !== -1 && text.indexOf(quoted, at + 1) === -1;
    });
  if (!once(parsed)) return false;
  const inner = within === undefined ? undefined : (parsed as Record<string, unknown>)[within];
  return !isObject(inner) || once(inner);
}

function isObject(value: unknown): value is object {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** What a body or message giving `key` twice is told. */
export function repeatedKeyDetail(key: string): string {
  return `'${key}' is given more than once; send each field once`;
}
