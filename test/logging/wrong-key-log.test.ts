import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import { MAX_WRONG_KEY_ADDRESSES, WRONG_KEY_WINDOW_MS, WrongKeyLog } from '../../src/logging/wrong-key-log.js';

function capturing() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger('info', {
    write: (block: string) => {
      for (const line of block.split('\n'))
        if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
    },
  });
  return { logger, lines };
}

describe('wrong source keys, logged per client address per minute', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-11-25T14:00:00.000Z'));
  });
  afterEach(() => vi.useRealTimers());

  it('writes one line per address per minute with its count, nothing in between, and nothing for a quiet minute', async () => {
    const { logger, lines } = capturing();
    const log = new WrongKeyLog(logger);
    for (let i = 0; i < 500; i++) log.record('203.0.113.9');
    log.record('2001:db8::1');
    await vi.advanceTimersByTimeAsync(WRONG_KEY_WINDOW_MS - 1);
    logger.flush();
    expect(lines).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    logger.flush();
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        clientAddress: '203.0.113.9',
        count: 500,
        since: '2026-11-25T14:00:00.000Z',
        seconds: 60,
        statusCode: 401,
      }),
      expect.objectContaining({
        level: 40,
        clientAddress: '2001:db8::1',
        count: 1,
        msg: '1 inbound request with a source key no source has',
      }),
    ]);
    expect(lines[0]!.msg).toBe('500 inbound requests with a source key no source has');

    log.record('203.0.113.9');
    await vi.advanceTimersByTimeAsync(WRONG_KEY_WINDOW_MS);
    await vi.advanceTimersByTimeAsync(WRONG_KEY_WINDOW_MS);
    logger.flush();
    expect(lines.slice(2)).toEqual([
      expect.objectContaining({ clientAddress: '203.0.113.9', count: 1, since: '2026-11-25T14:01:00.000Z' }),
    ]);
    expect(log.total).toBe(502);
    log.close();
  });

  it(`counts addresses past the first ${MAX_WRONG_KEY_ADDRESSES} of a minute together, and writes what is counted on close`, () => {
    const { logger, lines } = capturing();
    const log = new WrongKeyLog(logger);
    for (let i = 0; i < MAX_WRONG_KEY_ADDRESSES + 3; i++) log.record(`2001:db8::${i.toString(16)}`);
    log.record('2001:db8::0');
    log.close();
    logger.flush();
    expect(lines).toHaveLength(MAX_WRONG_KEY_ADDRESSES + 1);
    expect(lines[0]).toMatchObject({ clientAddress: '2001:db8::0', count: 2 });
    expect(lines.at(-1)).toMatchObject({ clientAddress: 'other', count: 3 });
  });
});
