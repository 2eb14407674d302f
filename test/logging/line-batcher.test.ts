import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LineBatcher } from '../../src/logging/line-batcher.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function logFile(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-log-'));
  dirs.push(dir);
  return path.join(dir, 'out.log');
}

function flushed(batcher: LineBatcher): Promise<void> {
  return new Promise((resolve, reject) => batcher.flush((error) => (error ? reject(error) : resolve())));
}

describe('log line batcher', () => {
  it('writes every line, in order, by the time a flush returns', async () => {
    const file = logFile();
    const batcher = new LineBatcher(
      pino.destination({ dest: file, sync: false, minLength: 1, mkdir: true }),
      8 * 1024,
      60_000,
    );
    const lines = Array.from({ length: 500 }, (_, i) => `{"n":${i},"text":"${'é'.repeat(i % 7)}"}\n`);
    for (const line of lines) batcher.write(line);
    await flushed(batcher);
    expect(readFileSync(file, 'utf8')).toBe(lines.join(''));
  });

  it('hands a quiet logger’s lines over on its timer, without a flush', async () => {
    const file = logFile();
    const batcher = new LineBatcher(
      pino.destination({ dest: file, sync: false, minLength: 1, mkdir: true }),
      8 * 1024,
      20,
    );
    batcher.write('{"msg":"quiet"}\n');
    const written = () => (existsSync(file) ? readFileSync(file, 'utf8') : '');
    for (const deadline = Date.now() + 20_000; !written().includes('quiet') && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(written()).toBe('{"msg":"quiet"}\n');
    await flushed(batcher);
  });

  it('keeps no timer while it holds no lines, so an idle process is not woken for it', () => {
    vi.useFakeTimers();
    try {
      const written: string[] = [];
      const destination = { write: (block: string) => written.push(block) } as unknown as ReturnType<
        typeof pino.destination
      >;
      const batcher = new LineBatcher(destination, 8 * 1024, 50);
      expect(vi.getTimerCount()).toBe(0);
      batcher.write('{"msg":"one"}\n');
      batcher.write('{"msg":"two"}\n');
      expect(vi.getTimerCount()).toBe(1);
      vi.advanceTimersByTime(50);
      expect(written).toEqual(['{"msg":"one"}\n{"msg":"two"}\n']);
      expect(vi.getTimerCount()).toBe(0);
      vi.advanceTimersByTime(10_000);
      expect(written).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('writes the last lines of a process that exits without flushing', () => {
    const script = `
      import { pino } from 'pino';
      import { LineBatcher } from ${JSON.stringify(path.resolve('dist/logging/line-batcher.js'))};
      const batcher = new LineBatcher(pino.destination({ dest: 1, sync: false, minLength: 1 }), 8192, 60000);
      batcher.write('{"msg":"last words"}\\n');
      process.exit(3);
    `;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(run.status).toBe(3);
    expect(run.stdout).toBe('{"msg":"last words"}\n');
  });
});
