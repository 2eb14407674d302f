import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedSource } from '../support/seed-source.js';
import { startTestServer, type TestServer } from '../support/start-test-server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

/** Writes raw bytes on a fresh connection and answers everything read until the server closes it. */
async function exchange(bytes: Buffer | string): Promise<string> {
  const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1');
  let answers = '';
  socket.on('data', (data) => (answers += data.toString('latin1')));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => {});
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(bytes);
  const gaveUp = setTimeout(() => socket.destroy(), 10_000);
  await closed;
  clearTimeout(gaveUp);
  return answers;
}

/** Status lines; an answer follows the body before it directly, without a line break. */
const STATUS_LINE = /HTTP\/1\.1 (\d{3}) [A-Z]/g;

function statuses(answers: string): number[] {
  return [...answers.matchAll(STATUS_LINE)].map((match) => Number(match[1]));
}

function inboundRequest(path: string, body: Buffer, declaredLength: number): Buffer {
  const head = `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: ${declaredLength}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head), body]);
}

describe('bytes that are not HTTP', () => {
  it('behind a stored signal: its 202 is answered first, then the 400 for the rest, never the 400 alone', async () => {
    const src = await seedSource(server);
    // A sender that counts characters, not UTF-8 bytes: the declared length ends the body one
    // byte early, so the signal stored is `vol=1`, and a lone `0` is left over as the next request.
    const body = Buffer.from('EURUSD,buy,comment=ü,vol=10');
    const answers = await exchange(inboundRequest(src.inboundPath, body, body.length - 1));

    expect(statuses(answers)).toEqual([202, 400]);
    const [accepted, refused] = answers.split(/(?=HTTP\/1\.1 \d{3} [A-Z])/);
    expect(accepted).toContain('"status":"queued"');
    expect(refused).toMatch(/^content-type: application\/problem\+json/im);
    expect(refused).toContain('"code":"INVALID_REQUEST"');
    const logged = await server.admin('GET', `/api/admin/signals?sourceId=${src.sourceId}`);
    expect(logged.body.signals.map((s: { rawBody: string }) => s.rawBody)).toEqual(['EURUSD,buy,comment=ü,vol=1']);
  });

  it('on their own: 400 INVALID_REQUEST as a problem body, and the connection closes', async () => {
    const answers = await exchange('this is not http\r\n\r\n');
    expect(statuses(answers)).toEqual([400]);
    expect(answers).toMatch(/^content-type: application\/problem\+json/im);
    expect(answers).toContain('"code":"INVALID_REQUEST"');
  });

  it('behind two pipelined signals: both are answered in order before the 400', async () => {
    const src = await seedSource(server);
    const one = Buffer.from('EURUSD,buy,vol=0.1');
    const two = Buffer.from('GBPUSD,sell,vol=0.2');
    const answers = await exchange(
      Buffer.concat([
        inboundRequest(src.inboundPath, one, one.length),
        inboundRequest(src.inboundPath, two, two.length),
        Buffer.from('garbage\r\n\r\n'),
      ]),
    );
    expect(statuses(answers)).toEqual([202, 202, 400]);
    const symbols = [...answers.matchAll(/"symbol":"([A-Z]+)"/g)].map((match) => match[1]);
    expect(symbols).toEqual(['EURUSD', 'GBPUSD']);
  });

  it('inside a request whose body breaks off: 400 at once, nothing stored', async () => {
    const src = await seedSource(server);
    const head = `POST ${src.inboundPath} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const answers = await exchange(`${head}5\r\nEURUS\r\nzz\r\nD,buy\r\n0\r\n\r\n`);
    expect(statuses(answers)).toEqual([400]);
    const logged = await server.admin('GET', `/api/admin/signals?sourceId=${src.sourceId}`);
    expect(logged.body.signals).toEqual([]);
  });
});

describe('an oversized body without Content-Length', () => {
  it('is 413 and logged with its first KiB, also when it comes as one large chunk', async () => {
    const src = await seedSource(server);
    const body = `EURUSD,buy,comment=${'x'.repeat(20_000)}`;
    const head = `POST ${src.inboundPath} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`;
    const answers = await exchange(`${head}${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`);
    expect(statuses(answers)).toEqual([413]);
    const logged = await server.admin('GET', `/api/admin/signals?sourceId=${src.sourceId}`);
    expect(logged.body.signals.map((s: { code: string; rawBody: string }) => [s.code, s.rawBody])).toEqual([
      [
        'PAYLOAD_TOO_LARGE',
        `${body.slice(0, 1024)}…[cut by signalgate: the first 1024 of more than 16384 bytes are kept]`,
      ],
    ]);
  });
});
