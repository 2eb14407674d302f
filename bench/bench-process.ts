import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { TYPESCRIPT_NODE_ARGS } from './bench-files.js';

/** Where a benchmark process runs: pinned to one CPU (`taskset -c`), with extra node flags. */
export interface Placement {
  cpu?: string;
  nodeArgs?: string[];
}

/**
 * Runs a server script as a child process whose standard output goes to `logFile`, as an
 * operator's log would, and waits for its `listening` JSON line there, answering the URL it
 * printed. The log is not piped into this process: reading a server's log here would take CPU
 * from the load generator that shares the machine, and charge the server's logging twice.
 */
export async function spawnListening(
  script: string,
  args: string[],
  env: Record<string, string>,
  logFile: string,
  placement: Placement = {},
): Promise<{ child: ChildProcess; url: string }> {
  const log = openSync(logFile, 'a');
  let child: ChildProcess;
  // The benchmark's own servers (bare-server.ts) run from their TypeScript sources.
  const command = [
    ...(placement.nodeArgs ?? []),
    ...(script.endsWith('.ts') ? TYPESCRIPT_NODE_ARGS : []),
    script,
    ...args,
  ];
  try {
    // taskset execs node in place, so the child's pid (and its SIGTERM) is node's own.
    child = spawn(
      placement.cpu === undefined ? process.execPath : 'taskset',
      placement.cpu === undefined ? command : ['-c', placement.cpu, process.execPath, ...command],
      {
        env: { ...process.env, HOST: '127.0.0.1', PORT: '0', ...env },
        stdio: ['ignore', log, 'inherit'],
      },
    );
  } finally {
    closeSync(log);
  }
  let exited: number | null = null;
  child.once('exit', (code) => (exited = code ?? -1));
  for (;;) {
    const url = listeningUrl(readFileSync(logFile, 'utf8'));
    if (url !== null) return { child, url };
    if (exited !== null) throw new Error(`${script} exited with ${exited} before listening; its log is ${logFile}`);
    await sleep(20);
  }
}

function listeningUrl(log: string): string | null {
  for (const line of log.split('\n')) {
    if (!line.includes('"listening"') || !line.endsWith('}')) continue;
    const entry = JSON.parse(line) as { url?: string };
    if (entry.url) return entry.url;
  }
  return null;
}

/** SIGTERM, and wait for the exit. */
export function stopProcess(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
