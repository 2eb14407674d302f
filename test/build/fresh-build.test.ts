import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { staleBuild } from '../support/fresh-build.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A checkout with `src/a/b.ts` and `dist/a/b.js`, the build written at `builtAt` (s), the sources at `editedAt`. */
function checkout(editedAt: number, builtAt: number): { src: string; dist: string } {
  const root = mkdtempSync(path.join(tmpdir(), 'signalgate-fresh-build-'));
  dirs.push(root);
  const src = path.join(root, 'src');
  const dist = path.join(root, 'dist');
  for (const [dir, file, at] of [
    [src, 'b.ts', editedAt],
    [dist, 'b.js', builtAt],
  ] as const) {
    mkdirSync(path.join(dir, 'a'), { recursive: true });
    writeFileSync(path.join(dir, 'a', file), '');
    for (const entry of [path.join(dir, 'a', file), path.join(dir, 'a'), dir]) utimesSync(entry, at, at);
  }
  return { src, dist };
}

describe('the check that the build is not older than the sources', () => {
  it('passes a build written after the last edit', () => {
    const { src, dist } = checkout(1_000, 2_000);
    expect(staleBuild(src, dist)).toBeNull();
  });

  it('names the edited file and says to build when a source changed after the build', () => {
    const { src, dist } = checkout(1_000, 2_000);
    utimesSync(path.join(src, 'a', 'b.ts'), 3_000, 3_000);
    expect(staleBuild(src, dist)).toMatch(
      /^the build in dist\/ \(1970-01-01T00:33:20\.000Z\) is older than .*src\/a\/b\.ts \(1970-01-01T00:50:00\.000Z\)$/,
    );
  });

  it('notices a source file removed after the build, by its folder', () => {
    const { src, dist } = checkout(1_000, 2_000);
    rmSync(path.join(src, 'a', 'b.ts'));
    expect(staleBuild(src, dist)).toMatch(/is older than .*src\/a \(/);
  });

  it('says when there is no build at all', () => {
    const { src, dist } = checkout(1_000, 2_000);
    rmSync(dist, { recursive: true });
    expect(staleBuild(src, dist)).toMatch(/holds no build$/);
  });
});
