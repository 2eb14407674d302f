import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

export const CLI = path.resolve('dist/cli/main.js');

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Runs `signalgate serve` as a real process and waits for its `listening` log line; `nodeArgs`
 * go to node before the script (e.g. `--import` of a test fixture).
 */
export async function spawnServer(env: Record<string, string>, nodeArgs: string[] = []): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...nodeArgs, CLI, 'serve'], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  // On 'close', not 'exit': 'exit' may come before the last of its output has been read, and
  // tests read stdout() and stderr() once this resolves.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    // A server that never said it listens is stopped: the test fails, and nothing is left running.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start within 20 s:\n${out}\n${err}`));
    }, 20_000);
    const look = () => {
      for (const line of out.split('\n')) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'listening' && entry.url) {
          clearTimeout(timer);
          resolve(entry.url);
          return;
        }
      }
    };
    child.stdout!.on('data', look);
    void exited.then(() => reject(new Error(`server exited before listening:\n${out}\n${err}`)));
  });
  return { child, url, stdout: () => out, stderr: () => err, exited };
}
