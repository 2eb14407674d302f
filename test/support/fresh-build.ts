import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Vitest global setup: many tests start the built product (`node dist/cli/main.js`, and the
 * store's worker threads run from dist/ too), so a build older than the sources would test code
 * that is no longer there. `npm test` builds first; `npx vitest run <file>` does not, so the run
 * stops here, before any test, when some file or folder of src/ changed after dist/ was written.
 */
export default function setup(): void {
  const problem = staleBuild(path.resolve('src'), path.resolve('dist'));
  if (problem !== null) throw new Error(`${problem}: run npm run build, then the tests again`);
}

/** Why dist/ does not hold the current sources, or null when it does. */
export function staleBuild(srcDir: string, distDir: string): string | null {
  const built = walk(distDir).filter((entry) => entry.file.endsWith('.js'));
  if (built.length === 0) return `${path.relative(process.cwd(), distDir) || distDir}/ holds no build`;
  // The build writes every file; the oldest one is when it started writing.
  const builtAt = Math.min(...built.map((entry) => entry.mtimeMs));
  // A folder's time changes when a file in it is added, removed or renamed.
  const newest = walk(srcDir, true).reduce((a, b) => (b.mtimeMs > a.mtimeMs ? b : a));
  if (newest.mtimeMs <= builtAt) return null;
  return `the build in dist/ (${new Date(builtAt).toISOString()}) is older than ${path.relative(process.cwd(), newest.file)} (${new Date(newest.mtimeMs).toISOString()})`;
}

function walk(dir: string, withFolders = false): Array<{ file: string; mtimeMs: number }> {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const found = withFolders ? [{ file: dir, mtimeMs: statSync(dir).mtimeMs }] : [];
  for (const entry of entries) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...walk(file, withFolders));
    else found.push({ file, mtimeMs: statSync(file).mtimeMs });
  }
  return found;
}
