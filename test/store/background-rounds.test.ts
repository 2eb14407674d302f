import type { Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import { startExpirySweeper } from '../../src/delivery/expiry-sweeper.js';
import { startRetention } from '../../src/service/retention.js';
import type { Store } from '../../src/store/store.js';

/** A logger whose warn line itself fails (as a broken log stream would), recording its error lines. */
function brokenWarnLogger() {
  const errors: Array<{ fields: Record<string, unknown>; message: string }> = [];
  const logger = {
    warn: () => {
      throw new Error('log stream gone');
    },
    info: () => undefined,
    error: (fields: Record<string, unknown>, message: string) => errors.push({ fields, message }),
  } as unknown as Logger;
  return { logger, errors };
}

const until = async (condition: () => boolean) => {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
};

describe('a background round whose error escapes its own handling', () => {
  it('the expiry sweep: logged at error with the task, and the next rounds still run', async () => {
    let rounds = 0;
    const store = {
      deliveries: {
        expire: async () => {
          rounds++;
          throw new Error('store gone');
        },
      },
    } as unknown as Store;
    const { logger, errors } = brokenWarnLogger();
    const sweeper = startExpirySweeper(store, logger, { intervalMs: 10 });
    await until(() => rounds >= 3);
    await sweeper.stop();
    expect(rounds).toBeGreaterThanOrEqual(3);
    expect(errors[0]).toMatchObject({
      fields: { task: 'expiry sweep', err: expect.objectContaining({ message: 'log stream gone' }) },
    });
  });

  it('retention: logged at error with the task, and the next rounds still run', async () => {
    let rounds = 0;
    const store = {
      retention: {
        pruneIdempotencyKeys: async () => {
          rounds++;
          throw new Error('store gone');
        },
      },
    } as unknown as Store;
    const { logger, errors } = brokenWarnLogger();
    const retention = startRetention(store, logger, { retentionMs: 86_400_000, intervalMs: 10 });
    await until(() => rounds >= 3);
    await retention.stop();
    expect(rounds).toBeGreaterThanOrEqual(3);
    expect(errors[0]).toMatchObject({ fields: { task: 'retention' } });
  });
});
