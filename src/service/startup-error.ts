import type { Config } from '../config/config.js';

/**
 * Why the service could not start, as one sentence that names the setting to look at. A stack
 * trace from deep inside a driver tells an operator neither which setting nor what to do.
 */
export class StartupError extends Error {
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
  }
}

export function storeStartupError(config: Config, cause: unknown): StartupError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  if (config.databaseUrl !== null) {
    return new StartupError(
      `cannot use the PostgreSQL store at SIGNALGATE_DATABASE_URL=${withoutPassword(config.databaseUrl)}: ${reason}; check that the server is running, the database exists and the URL's search_path names an existing schema`,
      { cause },
    );
  }
  return new StartupError(
    `cannot open the SQLite store in SIGNALGATE_DATA_DIR=${config.dataDir}: ${reason}; check that it is a directory this user can write, or set SIGNALGATE_DATA_DIR`,
    { cause },
  );
}

export function listenStartupError(config: Config, cause: unknown): StartupError {
  const code = (cause as { code?: unknown }).code;
  const reason = cause instanceof Error ? cause.message : String(cause);
  const hint =
    code === 'EADDRINUSE'
      ? 'another process listens on that port; stop it or set PORT'
      : code === 'EACCES'
        ? 'this user may not listen on that port; choose a PORT above 1023'
        : 'check HOST (an address of this machine, like 127.0.0.1 or 0.0.0.0) and PORT';
  return new StartupError(`cannot listen on HOST=${config.host} PORT=${config.port}: ${reason}; ${hint}`, { cause });
}

/** A database URL as it may be shown: the password replaced. */
export function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '****';
    return parsed.toString();
  } catch {
    return '(a URL that does not parse)';
  }
}
