import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { InboundAccessLog, NO_AGENTS_MESSAGE, type InboundAccess } from '../../src/logging/inbound-access-log.js';
import { createLogger, maskedInboundPath } from '../../src/logging/logger.js';

/** A logger like the server's, writing into an array of lines. */
function capturingLogger(level = 'info') {
  const lines: string[] = [];
  const logger = createLogger(level, { write: (block: string) => lines.push(...block.split(/(?<=\n)/)) });
  return { logger, lines };
}

/** The time field differs from one millisecond to the next; everything else must not. */
const timeless = (line: string) => line.replace(/"time":"[^"]*"/, '"time":"T"');

const accesses: InboundAccess[] = [
  {
    encodedKey: 'AbC1dEf2gHi3jKl4',
    statusCode: 202,
    ms: 3.25,
    clientAddress: '203.0.113.7',
    signalId: 'sig_0mwsjedwk0000bc4ff84c',
  },
  { encodedKey: 'AbC1dEf2gHi3jKl4', statusCode: 422, ms: 0.5, clientAddress: '2001:db8::1', signalId: null },
  { encodedKey: 'short', statusCode: 401, ms: 12, clientAddress: 'bad"address', signalId: null },
  { encodedKey: 'ключ-источника-1', statusCode: 202, ms: 1, clientAddress: '10.0.0.1', signalId: 'sig_x' },
  { encodedKey: 'a"b\\c-and-more', statusCode: 401, ms: 2.5, clientAddress: '127.0.0.1', signalId: 'sig_y' },
  { encodedKey: '%41%42%43%44%45', statusCode: 401, ms: 0, clientAddress: '::1', signalId: null },
  { encodedKey: 'x\u0001yz-control', statusCode: 401, ms: 7.77, clientAddress: '198.51.100.2', signalId: null },
  { encodedKey: 'AbC1dEf2gHi3jKl4', statusCode: 202, ms: 4, clientAddress: '192.0.2.1', signalId: 'sig_"odd"' },
];

/** What pino itself writes for the same access. */
function pinoLines(level = 'info', child?: Record<string, string>): string[] {
  const { logger, lines } = capturingLogger(level);
  const log = child ? logger.child(child) : logger;
  for (const { encodedKey, statusCode, ms, clientAddress, signalId } of accesses) {
    log.info(
      {
        method: 'POST',
        url: maskedInboundPath(encodedKey),
        statusCode,
        ms,
        clientAddress,
        signalId: signalId ?? undefined,
      },
      'request',
    );
  }
  return lines.map(timeless);
}

describe('inbound access log', () => {
  it('writes, on the next turn and in order, the very lines pino writes for the same fields', async () => {
    const { logger, lines } = capturingLogger();
    const log = new InboundAccessLog(logger);
    for (const access of accesses) log.record(access);
    expect(lines).toEqual([]);
    await nextTurn();
    expect(lines.map(timeless)).toEqual(pinoLines());
    expect(lines.every((line) => JSON.parse(line).time.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/))).toBe(true);
  });

  it('carries a child logger’s bindings as pino does', async () => {
    const { logger, lines } = capturingLogger();
    const log = new InboundAccessLog(logger.child({ component: 'inbound' }));
    for (const access of accesses) log.record(access);
    await nextTurn();
    expect(lines.map(timeless)).toEqual(pinoLines('info', { component: 'inbound' }));
    expect(JSON.parse(lines[0]!).component).toBe('inbound');
  });

  it('writes nothing above the info level, and follows a level changed at run time', async () => {
    const { logger, lines } = capturingLogger('warn');
    const log = new InboundAccessLog(logger);
    log.record(accesses[0]!);
    await nextTurn();
    expect(lines).toEqual([]);
    logger.level = 'info';
    log.record(accesses[0]!);
    await nextTurn();
    expect(lines.map(timeless)).toEqual(pinoLines().slice(0, 1));
  });

  it('writes what is recorded at once on flush, before a line logged after it, and not again on the next turn', async () => {
    const { logger, lines } = capturingLogger();
    const log = new InboundAccessLog(logger);
    log.record(accesses[0]!);
    log.record(accesses[1]!);
    log.flush();
    logger.info('stopped');
    await nextTurn();
    expect(lines.map(timeless)).toEqual([...pinoLines().slice(0, 2), expect.stringContaining('"msg":"stopped"')]);
    log.flush();
    expect(lines).toHaveLength(3);
  });

  it('follows the access line of a signal no agent will get with the warning pino writes for it, at the warn level too', async () => {
    const noAgents: InboundAccess[] = [
      { ...accesses[0]!, noAgentsSourceId: 'src_0mwsjedwk0000' },
      accesses[1]!,
      { ...accesses[7]!, noAgentsSourceId: 'src_"quoted"' },
    ];
    const expected = (level: string) => {
      const { logger, lines } = capturingLogger(level);
      for (const access of noAgents) {
        const { encodedKey, statusCode, ms, clientAddress, signalId, noAgentsSourceId } = access;
        logger.info(
          {
            method: 'POST',
            url: maskedInboundPath(encodedKey),
            statusCode,
            ms,
            clientAddress,
            signalId: signalId ?? undefined,
          },
          'request',
        );
        if (noAgentsSourceId !== undefined) logger.warn({ signalId, sourceId: noAgentsSourceId }, NO_AGENTS_MESSAGE);
      }
      return lines.map(timeless);
    };
    for (const level of ['info', 'warn']) {
      const { logger, lines } = capturingLogger(level);
      const log = new InboundAccessLog(logger);
      for (const access of noAgents) log.record(access);
      await nextTurn();
      expect(lines.map(timeless)).toEqual(expected(level));
    }
    expect(expected('warn')).toHaveLength(2);
    expect(JSON.parse(expected('info')[1]!)).toMatchObject({
      level: 40,
      signalId: accesses[0]!.signalId,
      sourceId: 'src_0mwsjedwk0000',
      msg: NO_AGENTS_MESSAGE,
    });
  });
});
