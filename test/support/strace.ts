import { spawn, spawnSync } from 'node:child_process';

/** Whether strace can run here (the test set-up installs Debian's package when it is missing). */
export const hasStrace = spawnSync('strace', ['-V']).status === 0;

export interface Strace {
  /** Detaches (SIGINT) and waits until the trace file is complete. */
  stop(): Promise<void>;
}

/**
 * strace attached to a running process and all its threads (`-f`, file names by `-y`), writing
 * to `file`; resolves once strace says it is attached, so nothing after is missed.
 */
export async function attachStrace(pid: number, file: string, args: string[]): Promise<Strace> {
  const strace = spawn('strace', ['-f', '-y', ...args, '-o', file, '-p', String(pid)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let said = '';
    strace.stderr!.on('data', (chunk: Buffer) => {
      said += chunk.toString();
      if (said.includes('attached')) resolve();
    });
    strace.once('exit', (code) => reject(new Error(`strace exited with ${code}: ${said}`)));
  });
  return {
    stop: async () => {
      const exited = new Promise((resolve) => strace.once('exit', resolve));
      strace.kill('SIGINT');
      await exited;
    },
  };
}
