import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * `npx signalgate` outside the checkout resolves a public package of that name, not this one,
 * and inside it npm does not run the project's own bin either. The documented form runs the
 * project's own build: `node dist/cli/main.js <command>` from the checkout.
 */
const DOCUMENTED = ['node', 'dist/cli/main.js'];

function markdownFiles(): string[] {
  const files = ['README.md'];
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.md')) files.push(full);
    }
  };
  walk('docs');
  return files;
}

describe('the documented commands', () => {
  // A command (`npx signalgate parse …`), not a sentence that names the form to avoid.
  it('never use npx signalgate, which can run a public package of that name', () => {
    const found = markdownFiles().flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, index) => (/\bnpx\s+signalgate\s+[a-z]|\bnpm\s+exec\s+.*\bsignalgate\s+[a-z]/.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });

  it('run the project\'s own CLI in the documented form', () => {
    const [command, ...args] = DOCUMENTED;
    const run = spawnSync(command!, [...args, 'parse', 'EURUSD,buy'], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ symbol: 'EURUSD', action: 'buy' });
  });
});
