import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, seedSource } from '../support/seed-source.js';
import { startTestServer, type TestServer } from '../support/start-test-server.js';

const CLI = path.resolve('dist/cli/main.js');

/** `signalgate parse --json [args]` as a real process, the body on stdin; answers its problem body. */
function parseCommand(body: string, args: string[] = []): Promise<any> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'parse', '--json', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.on('error', reject);
    child.on('close', () => resolve(JSON.parse(stdout)));
    child.stdin.end(body);
  });
}

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

describe('a body that starts like JSON', () => {
  it('gets the same explanation of its invalid JSON from the endpoint, whatever the media type, and from signalgate parse', async () => {
    const src = await seedSource(server);
    const body = '{"symbol":"EURUSD","action":"buy",}';
    const detail = "malformed JSON at line 1, column 35: expected a quoted key but found '}'";
    for (const type of ['text/plain', 'application/json', 'application/x-www-form-urlencoded', undefined]) {
      const res = await post(
        server.url + src.inboundPath,
        Buffer.from(body),
        type === undefined ? {} : { 'content-type': type },
      );
      expect({ type, status: res.status, code: res.body.code, detail: res.body.detail }).toEqual({
        type,
        status: 400,
        code: 'PARSE_ERROR',
        detail,
      });
    }
    for (const args of [[], ['--format', 'text'], ['--format', 'json']]) {
      expect(await parseCommand(body, args)).toMatchObject({ code: 'PARSE_ERROR', detail });
    }
  });

  it('is told to send valid JSON as application/json when it was read as text, not accepted as text', async () => {
    const src = await seedSource(server);
    const body = ' {"symbol":"EURUSD","action":"buy"}';
    const detail =
      'the body is a JSON object but is read as the text form (EURUSD,buy,...); send it with Content-Type: application/json';
    const res = await post(server.url + src.inboundPath, body, { 'content-type': 'text/plain' });
    expect({ status: res.status, code: res.body.code, detail: res.body.detail }).toEqual({
      status: 400,
      code: 'PARSE_ERROR',
      detail,
    });
    expect(await parseCommand(body, ['--format', 'text'])).toMatchObject({ code: 'PARSE_ERROR', detail });
    expect((await post(server.url + src.inboundPath, body, { 'content-type': 'application/json' })).status).toBe(202);
  });
});
