import type { IncomingMessage } from 'node:http';
import type { FastifyReply } from 'fastify';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { MAX_COUNTED_ADDRESSES, WRONG_TOKENS_PER_WINDOW_OTHERS, WrongTokens } from '../../src/http-kit/wrong-tokens.js';

/** A request from `address`, as the limiter sees one (the address comes through clientAddressOf). */
const from = (address: string) => ({ raw: { address } as unknown as IncomingMessage });

/** Just enough of a Fastify reply to record the answer. */
function reply(): FastifyReply & { status?: number } {
  const r = {
    status: undefined as number | undefined,
    header: () => r,
    code: (status: number) => ((r.status = status), r),
    send: () => r,
  };
  return r as unknown as FastifyReply & { status?: number };
}

describe('wrong tokens from very many addresses', () => {
  it(`counts at most ${MAX_COUNTED_ADDRESSES} addresses apart and the rest together, so memory and log stay bounded, and limits the rest together`, () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino(
      { level: 'warn' },
      { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    );
    const limiter = new WrongTokens(logger, (req) => (req as unknown as { address: string }).address);
    try {
      const spread = MAX_COUNTED_ADDRESSES + WRONG_TOKENS_PER_WINDOW_OTHERS;
      for (let i = 0; i < spread; i++)
        limiter.wrong(from(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`), 'admin');
      // A new address after all that: its tokens are not looked at, the addresses past the bound
      // having used up what they may send together.
      const late = reply();
      expect(limiter.refuse(from('192.0.2.1'), late, 'admin', 'Authorization')).toBe(late);
      expect(late.status).toBe(429);
      // An address counted apart with a single failure is not held up by the others.
      expect(limiter.refuse(from('10.0.0.1'), reply(), 'admin', 'Authorization')).toBeUndefined();
      limiter.flush();
      expect(lines).toHaveLength(MAX_COUNTED_ADDRESSES + 1);
      expect(lines.at(-1)).toMatchObject({ clientAddress: 'other', wrong: WRONG_TOKENS_PER_WINDOW_OTHERS, refused: 1 });
    } finally {
      limiter.close();
    }
  });
});
