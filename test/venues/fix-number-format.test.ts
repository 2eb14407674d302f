import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const PRELUDE = path.resolve('dist/agent/venues/fix/jspurefix-prelude.js');

// Prices as a FIX message carries them (fractions, tiny and huge ones, negatives, float noise),
// and a spread of others from a fixed pseudo-random sequence; each written by jspurefix into a
// message buffer.
const NUMBERS = [1.5, 0.1 + 0.2, 1e-7, 123456.789, 1.23456789012345, -0.00012, 1e21 + 0.5, 65000.1, 0.5, 2 ** -30];
let seed = 45;
for (let i = 0; i < 200; i++) {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  NUMBERS.push(Number(((seed / 2 ** 31 - 0.5) * 10 ** ((i % 14) - 6)).toPrecision(1 + (i % 16))));
}

/** In a fresh node: jspurefix writes each number; and whether mathjs's own functions were loaded. */
function written(before: string): { written: string[]; mathjsFunctions: number } {
  const script = `${before}
import jspurefix from 'jspurefix';
import { createRequire } from 'node:module';
const buffer = new jspurefix.ElasticBuffer(64);
const written = ${JSON.stringify(NUMBERS)}.map((n) => { buffer.reset(); buffer.writeNumber(n); return buffer.toString(); });
const mathjsFunctions = Object.keys(createRequire(import.meta.url).cache).filter((f) => f.includes('/mathjs/lib/cjs/function/')).length;
console.log(JSON.stringify({ written, mathjsFunctions }));`;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as {
    written: string[];
    mathjsFunctions: number;
  };
}

describe('the FIX venue loads jspurefix without the whole of mathjs', () => {
  it('numbers are written into FIX messages exactly as with mathjs loaded, which it no longer is', () => {
    const withMathjs = written(`import 'reflect-metadata';`);
    const withPrelude = written(`import ${JSON.stringify(PRELUDE)};`);
    expect(withMathjs.mathjsFunctions).toBeGreaterThan(0);
    expect(withPrelude.mathjsFunctions).toBe(0);
    expect(withPrelude.written).toEqual(withMathjs.written);
    expect(withPrelude.written.slice(0, 3)).toEqual(['1.5', '0.30000000000000004', '0.0000001']);
  });
});
