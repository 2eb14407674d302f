/**
 * JSON parsing that remembers where things are, so a bad configuration file can be reported
 * by line: the line of a syntax error, and the line of every object member and array element.
 * Node's JSON.parse does not say on which line it stopped. Duplicate keys are an error here
 * (JSON.parse silently keeps the last one, which hides a mistake).
 */

export type JsonPath = readonly (string | number)[];

export type LocatedJson =
  | { ok: true; value: unknown; lineOf: (path: JsonPath) => number | null }
  | { ok: false; line: number; message: string };

class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

export function parseLocatedJson(text: string): LocatedJson {
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') lineStarts.push(i + 1);
  const lineAt = (offset: number): number => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  const lines = new Map<string, number>();
  let i = text.startsWith('\uFEFF') ? 1 : 0;

  const skip = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const fail = (message: string): never => {
    throw new JsonSyntaxError(message, i);
  };
  const describe = (): string => (i >= text.length ? 'the end of the file' : `"${text[i]}"`);

  const parseString = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text.charCodeAt(i) < 0x20) fail('a string may not contain a line break or control character');
      i += text[i] === '\\' ? 2 : 1;
    }
    if (i >= text.length) {
      i = start;
      fail('a string is not closed');
    }
    i++;
    try {
      return JSON.parse(text.slice(start, i)) as string;
    } catch {
      i = start;
      return fail('a string holds an invalid escape sequence');
    }
  };

  const parseValue = (path: JsonPath): unknown => {
    skip();
    lines.set(JSON.stringify(path), lineAt(i));
    const c = text[i];
    if (c === '{') {
      i++;
      const object: Record<string, unknown> = {};
      skip();
      if (text[i] === '}') {
        i++;
        return object;
      }
      while (true) {
        skip();
        if (text[i] !== '"') fail(`expected a quoted property name, found ${describe()}`);
        const keyAt = i;
        const key = parseString();
        if (Object.hasOwn(object, key)) {
          i = keyAt;
          fail(`the key "${key}" appears twice`);
        }
        skip();
        if (text[i] !== ':') fail(`expected ":" after "${key}", found ${describe()}`);
        i++;
        // defineProperty: a "__proto__" key must be data, not a prototype change.
        Object.defineProperty(object, key, {
          value: parseValue([...path, key]),
          enumerable: true,
          writable: true,
          configurable: true,
        });
        lines.set(JSON.stringify([...path, key]), lineAt(keyAt));
        skip();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return object;
        }
        fail(`expected "," or "}" after the value of "${key}", found ${describe()}`);
      }
    }
    if (c === '[') {
      i++;
      const array: unknown[] = [];
      skip();
      if (text[i] === ']') {
        i++;
        return array;
      }
      while (true) {
        array.push(parseValue([...path, array.length]));
        skip();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return array;
        }
        fail(`expected "," or "]" in a list, found ${describe()}`);
      }
    }
    if (c === '"') return parseString();
    for (const [word, value] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return value;
      }
    }
    NUMBER.lastIndex = i;
    const number = NUMBER.exec(text);
    if (number !== null) {
      i += number[0].length;
      return Number(number[0]);
    }
    return fail(`expected a value, found ${describe()}`);
  };

  try {
    const value = parseValue([]);
    skip();
    if (i < text.length) fail(`unexpected ${describe()} after the end of the JSON value`);
    return { ok: true, value, lineOf: (path) => lines.get(JSON.stringify(path)) ?? null };
  } catch (error) {
    if (error instanceof JsonSyntaxError) return { ok: false, line: lineAt(error.offset), message: error.message };
    throw error;
  }
}
