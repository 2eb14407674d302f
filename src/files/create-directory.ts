import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Creates `dir` and its missing parents, each with `mode`, like `mkdir -p`, and throws the
 * first failure. Not `mkdirSync(dir, { recursive: true })`: Node's walk steps back to the
 * parent on ENOENT and forward again on EEXIST, so under a parent that exists but cannot hold
 * entries (a path under /proc) it loops for ever at full CPU instead of failing. Here the
 * missing components are found first, then created from the top, once each.
 */
export function createDirectory(dir: string, mode = 0o777): void {
  const missing: string[] = [];
  for (let at = path.resolve(dir); ;) {
    // Errors other than ENOENT (ENOTDIR under a file, EACCES) are the answer already.
    const found = statSync(at, { throwIfNoEntry: false });
    if (found !== undefined) {
      if (!found.isDirectory())
        throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${at}'`), {
          code: 'ENOTDIR',
          syscall: 'mkdir',
          path: at,
        });
      break;
    }
    missing.unshift(at);
    const parent = path.dirname(at);
    if (parent === at) break;
    at = parent;
  }
  for (const component of missing) {
    try {
      mkdirSync(component, { mode });
    } catch (error) {
      // Created by someone else meanwhile is as good; anything else (ENOENT under /proc, a
      // dangling symlink's EEXIST, EACCES, EROFS) is final.
      const code = (error as { code?: unknown }).code;
      if (code !== 'EEXIST' || statSync(component, { throwIfNoEntry: false })?.isDirectory() !== true) throw error;
    }
  }
}
