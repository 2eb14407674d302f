import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ownModules } from '../../vitest.config.js';

// Built from parts, so that this file does not match itself.
const REPLACES_A_MODULE = new RegExp(['\\bvi\\.(do', ')?[m]ock\\(|\\bvi\\.reset', 'Modules\\('].join(''));

describe('test files sharing a worker process (isolate off)', () => {
  it('a file that replaces a module runs in a worker of its own: it is in ownModules', () => {
    const files = readdirSync('test', { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.test.ts'))
      .map((name) => `test/${name}`);
    const replacing = files.filter((file) => REPLACES_A_MODULE.test(readFileSync(file, 'utf8')));
    expect(replacing).toContain('test/venues/fix-state-files.test.ts');
    expect(replacing.filter((file) => !ownModules.includes(file))).toEqual([]);
    // And nothing listed that no longer replaces one (or is gone).
    expect(ownModules.filter((file) => !replacing.includes(file))).toEqual([]);
  });
});
