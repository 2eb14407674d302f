import { fileURLToPath } from 'node:url';

/** The server the benchmark measures: the built one that ships (`npm run bench` builds it first). */
export const BUILT_CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));

/** Node flags that let a child process run one of the benchmark's TypeScript files. */
export const TYPESCRIPT_NODE_ARGS = ['--import', new URL('./run-typescript.mjs', import.meta.url).href];

/** A benchmark file by name, e.g. benchFile('bare-server.ts'). */
export function benchFile(name: string): string {
  return fileURLToPath(new URL(`./${name}`, import.meta.url));
}
