import path from 'node:path';
import type { Config } from '../config/config.js';
import { LockFile, LockHeldError, type LockRole } from '../process/lock-file.js';
import { createDirectory } from '../files/create-directory.js';
import { PRIVATE_DIRECTORY_MODE } from '../files/private-files.js';
import { StartupError, storeStartupError } from './startup-error.js';

/**
 * One server per SQLite data directory, guarded by a lock the kernel drops when the server dies
 * (so a killed server can be restarted at once). Each server keeps its agents' WebSocket sessions in
 * memory, so two on one file would each take a session for the same agent and both hand out
 * its signals (on PostgreSQL, instances share that through the database).
 */
const SERVER: LockRole = {
  name: 'server',
  title: 'signalgate server',
  place: 'on the same data directory',
  runsAs: (args) => args.includes('serve'),
};

/** Takes the data directory for this server, or says in one sentence which server has it. */
export function lockDataDirectory(config: Config): LockFile {
  try {
    createDirectory(config.dataDir, PRIVATE_DIRECTORY_MODE);
  } catch (error) {
    throw storeStartupError(config, error);
  }
  const file = path.join(config.dataDir, 'server.lock');
  try {
    return LockFile.acquire(file, SERVER);
  } catch (error) {
    if (!(error instanceof LockHeldError)) throw storeStartupError(config, error);
    const who = error.pid === null ? 'another signalgate server' : `another signalgate server (pid ${error.pid})`;
    throw new StartupError(
      `${who} serves SIGNALGATE_DATA_DIR=${config.dataDir}; stop it, or give this server a data directory of its own`,
      { cause: error },
    );
  }
}
