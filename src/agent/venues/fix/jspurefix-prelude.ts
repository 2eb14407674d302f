import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { createRequire, Module } from 'node:module';
import path from 'node:path';

/**
 * Imported before jspurefix (first among a module's imports, so it runs first). jspurefix needs
 * a Reflect polyfill loaded before it; and of mathjs it uses one function, `format`, to write a
 * fractional number into a message (`ElasticBuffer.writeNumber`), yet loading mathjs whole was
 * most of what a FIX agent's start loaded (decision 0052-agent-start-cpu). mathjs's `format` of a number
 * is its `utils/string.js` `format` (the typed function dispatches a number and its options
 * there), so jspurefix is handed a mathjs of that one function, from the same installed mathjs.
 * If that file is not where this mathjs keeps it, nothing is replaced and jspurefix loads mathjs
 * as before.
 */
const fromHere = createRequire(import.meta.url);
const fromJspurefix = createRequire(fromHere.resolve('jspurefix'));
const mathjsEntry = fromJspurefix.resolve('mathjs');
const stringUtils = path.join(path.dirname(mathjsEntry), 'utils', 'string.js');
if (fromJspurefix.cache[mathjsEntry] === undefined && existsSync(stringUtils)) {
  const { format } = fromJspurefix(stringUtils) as { format: (value: unknown, options?: object) => string };
  const mathjs = new Module(mathjsEntry);
  mathjs.filename = mathjsEntry;
  mathjs.exports = { format };
  mathjs.loaded = true;
  fromJspurefix.cache[mathjsEntry] = mathjs;
}
