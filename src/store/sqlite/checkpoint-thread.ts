import { Worker } from 'node:worker_threads';

export interface CheckpointThreadData {
  path: string;
  intervalMs: number;
  busyTimeoutMs: number;
}

/**
 * Runs the WAL checkpoints of a store on a thread of their own (checkpoint-thread-main.ts), off
 * the request path: with SQLite's automatic checkpoint, the connection whose COMMIT pushed the
 * WAL past 1,000 pages copied them into the database file and synced it before that COMMIT
 * returned, and the requests of that batch waited for it. `onExit` hears of a thread that ended
 * without being closed, for the store to checkpoint on commit again.
 */
export class CheckpointThread {
  private closing: Promise<void> | null = null;

  private constructor(private readonly worker: Worker) {}

  static start(data: CheckpointThreadData, onExit: (error: Error) => void): CheckpointThread {
    const worker = new Worker(threadEntry(), { workerData: data });
    const thread = new CheckpointThread(worker);
    worker.on('error', (error) => {
      if (!thread.closing) onExit(error);
    });
    worker.on('exit', (code) => {
      if (!thread.closing) onExit(new Error(`the checkpoint thread exited with code ${code}`));
    });
    // A thread that only checkpoints does not keep the process alive.
    worker.unref();
    return thread;
  }

  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      // Waiting for its exit must keep the process alive until it has closed its connection.
      this.worker.ref();
      this.worker.once('exit', () => resolve());
      this.worker.postMessage('close');
    });
    return this.closing;
  }
}

/** The thread's entry file, built beside this one (from the TypeScript sources: the built copy in `dist/`). */
function threadEntry(): URL {
  const here = new URL(import.meta.url);
  if (!here.pathname.endsWith('.ts')) return new URL('./checkpoint-thread-main.js', here);
  return new URL('../../../dist/store/sqlite/checkpoint-thread-main.js', here);
}
