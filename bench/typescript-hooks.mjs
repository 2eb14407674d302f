/**
 * Module hooks that run the benchmark from its TypeScript sources (bench/, the test fakes it
 * shares, and the product modules it calls in process), so that nothing of it is built into
 * dist/. Each file is transpiled alone by the project's own compiler; that is safe because the
 * project compiles with isolatedModules (no file needs another's types to be emitted). The type
 * check is `npm run typecheck` (tsconfig.bench.json). The servers the benchmark measures are
 * never run through this: they are the built dist/cli/main.js.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath, URL } from 'node:url';
import ts from 'typescript';

/** Imports name the emitted `.js` file (NodeNext); from a TypeScript file, take the `.ts` beside it. */
export async function resolve(specifier, context, nextResolve) {
  if (context.parentURL?.endsWith('.ts') && specifier.startsWith('.') && specifier.endsWith('.js')) {
    const source = new URL(`${specifier.slice(0, -'.js'.length)}.ts`, context.parentURL);
    if (existsSync(source)) return { url: source.href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const fileName = fileURLToPath(url);
  const { outputText } = ts.transpileModule(await readFile(fileName, 'utf8'), {
    fileName,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      isolatedModules: true,
      inlineSourceMap: true,
    },
  });
  return { format: 'module', source: outputText, shortCircuit: true };
}
