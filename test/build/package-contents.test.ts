import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** What `npm pack` puts in the package (scripts off: `prepare` would rebuild dist/ under the other tests). */
function packedFiles(): string[] {
  const packed = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { encoding: 'utf8' });
  expect(packed.status, packed.stderr).toBe(0);
  const [report] = JSON.parse(packed.stdout) as Array<{ files: Array<{ path: string }> }>;
  return report!.files.map((file) => file.path);
}

describe('the package', () => {
  it('holds the built product, its migrations and the dashboard, and no benchmark or test code', () => {
    const files = packedFiles();
    expect(files).toContain('dist/cli/main.js');
    expect(files).toContain('dist/inbound/inbound-thread-main.js');
    expect(files.some((file) => file.startsWith('migrations/sqlite/'))).toBe(true);
    expect(files.some((file) => file.startsWith('migrations/postgres/'))).toBe(true);
    expect(files).toContain('web/app.js');
    const outside = files.filter(
      (file) => !/^(dist|migrations|web)\//.test(file) && !['package.json', 'README.md', 'LICENSE'].includes(file),
    );
    expect(outside).toEqual([]);
    expect(
      files.filter((file) => /(^|\/)(bench|test|tests|fakes)\//.test(file) || /\.test\.[jt]s$/.test(file)),
    ).toEqual([]);
  });
});
