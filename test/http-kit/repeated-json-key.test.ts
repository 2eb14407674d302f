import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { repeatedJsonKey } from '../../src/http-kit/repeated-json-key.js';

/** A few names, so that keys repeat and turn up as values and as nested keys. */
const name = fc.constantFrom('type', 'state', 'status', 'id', 'a', 'é', 'x"y', '');
/** A key as a sender may write it: plain, or with a letter escaped. */
const spelt = fc.tuple(name, fc.boolean()).map(([key, escaped]) => {
  const json = JSON.stringify(key);
  return escaped && key.length > 0 ? `"\\u${key.charCodeAt(0).toString(16).padStart(4, '0')}${json.slice(2)}` : json;
});
const value: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom('1', 'null', 'true', '"type"', '"st\\"ate"', '[]'),
    name.map((n) => JSON.stringify(n)),
    fc.array(fc.tuple(spelt, tie('value')), { maxLength: 4 }).map(object),
    fc.array(tie('value'), { maxLength: 3 }).map((items) => `[${items.join(',')}]`),
  ),
})).value;
function object(members: [string, string][]): string {
  return `{${members.map(([key, v]) => `${key} : ${v}`).join(',')}}`;
}
const text = fc.array(fc.tuple(spelt, value), { maxLength: 6 }).map(object);

describe('a key given twice', () => {
  it('is found the same with the parsed object at hand as by reading the text key by key', () => {
    fc.assert(
      fc.property(text, fc.constantFrom(undefined, 'state'), (json, within) => {
        expect(repeatedJsonKey(json, within, JSON.parse(json))).toBe(repeatedJsonKey(json, within));
      }),
      { numRuns: 3000 },
    );
  });

  it('is found at the top level and inside the member named, plainly or spelt with escapes', () => {
    const cases: [string, string | undefined, string | null][] = [
      ['{"type":"ack","type":"state"}', undefined, 'type'],
      ['{"type":"state","state":{"balance":1,"balance":2}}', 'state', 'state.balance'],
      ['{"type":"state","state":{"balance":1,"b\\u0061lance":2}}', 'state', 'state.balance'],
      ['{"st\\u0061tus":"executed","status":"failed"}', undefined, 'status'],
      ['{"type":"ack","result":{"type":1,"type":2}}', undefined, null],
      ['{"type":"ack","message":"type"}', undefined, null],
    ];
    for (const [json, within, expected] of cases) {
      expect(repeatedJsonKey(json, within, JSON.parse(json)), json).toBe(expected);
    }
  });
});
