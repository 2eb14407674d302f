import { type ChildProcess, spawn } from 'node:child_process';

/**
 * Runs a server script as a child process and waits for its `listening` JSON line, answering
 * the URL it printed. Its log keeps being drained so a full pipe never stalls the server.
 */
export async function spawnListening(
  script: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [script, ...args], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString();
      for (const line of buffered.split('\n')) {
        if (!line.includes('"listening"')) continue;
        const entry = JSON.parse(line) as { url?: string };
        if (entry.url) {
          child.stdout!.off('data', onData);
          resolve(entry.url);
        }
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before listening`)));
  });
  child.stdout!.resume();
  return { child, url };
}

/** SIGTERM, and wait for the exit. */
export function stopProcess(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
