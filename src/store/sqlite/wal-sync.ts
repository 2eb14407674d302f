import { closeSync, fdatasync, fsyncSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { CoalescedSync } from './coalesced-sync.js';

/**
 * Makes what SQLite wrote to a database's write-ahead log durable, on libuv's thread pool
 * rather than the event loop. It does what `synchronous = FULL` does at COMMIT (fdatasync of
 * the WAL file, as SQLite itself calls on Linux), so a COMMIT run under `synchronous = NORMAL`
 * followed by `sync()` is as durable as a FULL one once `sync()` resolved, while the event loop
 * serves other requests during the wait.
 *
 * The WAL file keeps its inode while a connection to the database is open (SQLite deletes it
 * only when the last connection closes; restarts and checkpoints rewrite it in place), so one
 * descriptor opened on first use serves for the store's life.
 */
export class WalSync {
  private fd: number | null = null;
  /** Callers during a sync (the agents' overlapping groups) share the next one. */
  private readonly shared = new CoalescedSync(() => this.syncNow());

  constructor(private readonly databasePath: string) {}

  /** Resolves once an fdatasync of the WAL that began after this call returned. */
  sync(): Promise<void> {
    return this.shared.sync();
  }

  private syncNow(): Promise<void> {
    if (this.fd === null) this.open();
    const fd = this.fd!;
    return new Promise((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private open(): void {
    this.fd = openSync(`${this.databasePath}-wal`, 'r');
    // A WAL file created by this connection may be new: its directory entry must be on disk
    // too, or a power cut could lose the whole file. SQLite syncs the directory only on FULL.
    const directory = openSync(dirname(this.databasePath), 'r');
    try {
      fsyncSync(directory);
    } finally {
      closeSync(directory);
    }
  }
}
