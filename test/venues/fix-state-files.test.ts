import '../../src/agent/venues/fix/jspurefix-prelude.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import jspurefix from 'jspurefix';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';

/** What the FIX state files' writes did, in order: fsync of which path, renames. */
const io = vi.hoisted(() => ({ fds: new Map<number, string>(), calls: [] as string[] }));

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const openSync = ((file: string, ...rest: unknown[]) => {
    const fd = (fs.openSync as (...a: unknown[]) => number)(file, ...rest);
    io.fds.set(fd, String(file));
    return fd;
  }) as typeof fs.openSync;
  const fsyncSync = (fd: number) => {
    io.calls.push(`fsync ${io.fds.get(fd)}`);
    fs.fsyncSync(fd);
  };
  const renameSync = (from: string, to: string) => {
    io.calls.push(`rename ${String(from)} ${String(to)}`);
    fs.renameSync(from, to);
  };
  const patched = { ...fs, openSync, fsyncSync, renameSync };
  return { ...patched, default: patched };
});

const { SyncSeqNumStreamProvider } = await import('../../src/agent/venues/fix/application-message-store.js');
const { FixVenue } = await import('../../src/agent/venues/fix/fix-venue.js');

/**
 * The FIX sequence numbers and orders record are written whole and durably: a temporary file,
 * fsynced, renamed over the old one, then the directory fsynced (a power loss otherwise can
 * leave the rename, or the file's content, unwritten).
 */
describe('FIX state files', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-fix-files-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  beforeEach(() => {
    io.calls.length = 0;
  });

  /** The temp file fsynced, then renamed onto `file`, then `file`'s directory fsynced. */
  const expectDurable = (file: string) => {
    const rename = io.calls.findIndex((c) => c.startsWith('rename ') && c.endsWith(` ${file}`));
    expect(rename, io.calls.join('\n')).toBeGreaterThan(0);
    const temp = io.calls[rename]!.split(' ')[1]!;
    expect(io.calls.slice(0, rename)).toContain(`fsync ${temp}`);
    expect(io.calls.slice(rename + 1)).toContain(`fsync ${path.dirname(file)}`);
  };

  it('the sequence numbers', async () => {
    const sessionId = new jspurefix.SessionId('FIX.4.4', 'AGENT', 'BROKER');
    const provider = new SyncSeqNumStreamProvider(sessionId, dir);
    await provider.writeSeqNums('5 : 7');
    const file = sessionId.getFilePath(dir, 'seqnums');
    expect(readFileSync(file, 'utf8')).toBe('5 : 7');
    expectDurable(file);
  });

  it('the orders record', () => {
    const venue = new FixVenue({
      config: {
        dialect: 'fix44',
        trade: {
          host: '127.0.0.1',
          port: 1,
          tls: false,
          senderCompId: 'A',
          targetCompId: 'B',
          senderSubId: null,
          targetSubId: null,
          heartbeatSeconds: 30,
          resetOnLogon: false,
        },
        quote: null,
        account: { currency: 'USD', balance: 1 },
        instruments: {},
      },
      credentials: null,
      storeDir: dir,
      log: pino({ level: 'silent' }),
    });
    // The record is written as each order leaves and each report comes; this is that write.
    (venue as unknown as { saveRecord(): void }).saveRecord();
    const file = path.join(dir, 'orders.json');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ orders: [], execIds: [] });
    expectDurable(file);
  });
});
