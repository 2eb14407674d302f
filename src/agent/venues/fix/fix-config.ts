import { readFileSync, statSync } from 'node:fs';

/** One FIX session as the broker names it. */
export interface FixSessionConfig {
  host: string;
  port: number;
  tls: boolean;
  senderCompId: string;
  targetCompId: string;
  senderSubId: string | null;
  targetSubId: string | null;
  heartbeatSeconds: number;
  /**
   * Both sides start again at sequence number 1 on each logon (141=Y): cTrader asks for it.
   * Off, the sequence numbers are kept on disk across restarts and gaps are resent.
   */
  resetOnLogon: boolean;
}

/** An instrument as the broker trades it; FIX 4.4 brokers do not send these over the session. */
export interface FixInstrumentConfig {
  /** The broker's symbol (cTrader: its numeric symbol id). */
  brokerSymbol: string;
  digits: number;
  /** Units of one lot (100,000 for FX): the order quantity sent is lots × contractSize. */
  contractSize: number;
  lotMin: number;
  lotStep: number;
  lotMax: number;
  quoteCurrency: string;
}

export interface FixCredentials {
  username: string;
  password: string;
}

export interface FixConfig {
  /** `ctrader`: the cTrader FIX 4.4 rules (separate QUOTE and TRADE sessions, positions and mass status); `fix44`: plain FIX 4.4. */
  dialect: 'ctrader' | 'fix44';
  trade: FixSessionConfig;
  /** The market-data session; null: quotes come over the trade session. */
  quote: FixSessionConfig | null;
  /** cTrader's FIX sessions report no balance: sizing by a share of the balance uses this figure. */
  account: { currency: string; balance: number };
  /** Keyed by the signal symbol, upper case. */
  instruments: Record<string, FixInstrumentConfig>;
}

/** Environment variables the FIX logon's username and password may come from. */
export const FIX_CREDENTIAL_VARIABLES = {
  username: 'SIGNALGATE_FIX_USERNAME',
  password: 'SIGNALGATE_FIX_PASSWORD',
} as const;

type Result<T> = { ok: true; value: T } | { ok: false; message: string };

/**
 * Reads `--fix-config FILE` (JSON) and the logon credentials: from the file `--credentials`
 * names (`{"username": …, "password": …}`) or from the environment, never from a flag's value
 * (any user of the machine can read a process's arguments). The config file holds no secret.
 */
export function readFixConfig(
  file: string | undefined,
  credentialsFile: string | undefined,
  env: NodeJS.ProcessEnv,
): Result<{ config: FixConfig; credentials: FixCredentials | null; warnings: string[] }> {
  const fail = (message: string) => ({ ok: false as const, message });
  if (!file)
    return fail(
      "--venue fix needs --fix-config FILE, the JSON file naming the broker's FIX sessions (see docs/venues/fix.md)",
    );
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return fail(
      `--fix-config ${file}: ${code === 'ENOENT' ? 'no such file' : code ? (error as Error).message : `not JSON (${(error as Error).message})`}`,
    );
  }
  const parsed = parseFixConfig(raw);
  if (!parsed.ok) return fail(`--fix-config ${file}: ${parsed.message}`);
  const warnings: string[] = [];
  for (const [name, session] of [
    ['trade', parsed.value.trade],
    ['quote', parsed.value.quote],
  ] as const) {
    if (session !== null && !session.tls) warnings.push(plainSessionWarning(name, file));
  }
  let credentials: FixCredentials | null = null;
  if (credentialsFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(credentialsFile, 'utf8');
      if ((statSync(credentialsFile).mode & 0o077) !== 0)
        warnings.push(`the credentials file ${credentialsFile} can be read by other users; chmod 600 it`);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return fail(`--credentials ${credentialsFile}: ${code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
    }
    let creds: Partial<Record<'username' | 'password', unknown>>;
    try {
      creds = JSON.parse(text) as typeof creds;
    } catch {
      // The parser's message may quote the file: the password stays out of it.
      return fail(`--credentials ${credentialsFile} is not JSON; write {"username": "…", "password": "…"}`);
    }
    if (
      typeof creds?.username !== 'string' ||
      typeof creds.password !== 'string' ||
      !creds.username ||
      !creds.password
    ) {
      return fail(
        `--credentials ${credentialsFile} needs the strings "username" and "password" (the FIX logon's 553 and 554)`,
      );
    }
    credentials = { username: creds.username, password: creds.password };
  } else {
    const username = env[FIX_CREDENTIAL_VARIABLES.username]?.trim();
    const password = env[FIX_CREDENTIAL_VARIABLES.password];
    if (username && password) credentials = { username, password };
    else if (username || password)
      return fail(
        `give both ${FIX_CREDENTIAL_VARIABLES.username} and ${FIX_CREDENTIAL_VARIABLES.password}, or neither`,
      );
  }
  return { ok: true, value: { config: parsed.value, credentials, warnings } };
}

/** What the agent says at start about a session the file asks to run without TLS. */
export function plainSessionWarning(name: 'trade' | 'quote', file: string): string {
  return `--fix-config ${file}: "${name}"."tls" is false, so the FIX logon's username and password and every message of the session cross the network in clear, readable and changeable by anyone on the path; remove "tls": false (TLS is the default) unless the connection is private already (loopback, a VPN or an stunnel tunnel)`;
}

/** Checks the parsed config file; every problem names the field and what to write. */
export function parseFixConfig(raw: unknown): Result<FixConfig> {
  const fail = (message: string) => ({ ok: false as const, message });
  if (!isObject(raw))
    return fail(
      'write a JSON object with "trade" (and "quote" where the broker has a quote session), "account" and "instruments"',
    );
  const dialect = raw.dialect ?? 'fix44';
  if (dialect !== 'ctrader' && dialect !== 'fix44')
    return fail(`"dialect" must be "ctrader" or "fix44", got ${JSON.stringify(raw.dialect)}`);
  const trade = parseSession(raw.trade, 'trade', dialect);
  if (!trade.ok) return trade;
  let quote: FixSessionConfig | null = null;
  if (raw.quote !== undefined && raw.quote !== null) {
    const read = parseSession(raw.quote, 'quote', dialect);
    if (!read.ok) return read;
    quote = read.value;
  }
  const account = raw.account;
  if (
    !isObject(account) ||
    typeof account.currency !== 'string' ||
    !/^[A-Z]{3,5}$/.test(account.currency) ||
    typeof account.balance !== 'number' ||
    !(account.balance >= 0)
  ) {
    return fail(
      '"account" must be {"currency": "USD", "balance": 10000}: the FIX session reports no balance, and sizing by a share of the balance uses this figure',
    );
  }
  const instruments: Record<string, FixInstrumentConfig> = {};
  if (raw.instruments !== undefined) {
    if (!isObject(raw.instruments)) return fail('"instruments" must be an object keyed by the signal symbol');
    for (const [symbol, value] of Object.entries(raw.instruments)) {
      const at = `"instruments"."${symbol}"`;
      if (!isObject(value)) return fail(`${at} must be an object`);
      const numbers = ['digits', 'contractSize', 'lotMin', 'lotStep', 'lotMax'] as const;
      for (const name of numbers) {
        const n = value[name];
        if (typeof n !== 'number' || !Number.isFinite(n) || n < 0 || (name !== 'digits' && n === 0))
          return fail(`${at}.${name} must be a positive number`);
      }
      const brokerSymbol = value.brokerSymbol ?? symbol;
      if (typeof brokerSymbol !== 'string' && typeof brokerSymbol !== 'number')
        return fail(`${at}.brokerSymbol must be the broker's symbol (cTrader: its symbol id)`);
      if (typeof value.quoteCurrency !== 'string' || !/^[A-Z]{3,5}$/.test(value.quoteCurrency))
        return fail(`${at}.quoteCurrency must be a currency code such as "USD"`);
      instruments[symbol.toUpperCase()] = {
        brokerSymbol: String(brokerSymbol),
        digits: value.digits as number,
        contractSize: value.contractSize as number,
        lotMin: value.lotMin as number,
        lotStep: value.lotStep as number,
        lotMax: value.lotMax as number,
        quoteCurrency: value.quoteCurrency,
      };
    }
  }
  return {
    ok: true,
    value: {
      dialect,
      trade: trade.value,
      quote,
      account: { currency: account.currency, balance: account.balance },
      instruments,
    },
  };
}

function parseSession(raw: unknown, name: string, dialect: 'ctrader' | 'fix44'): Result<FixSessionConfig> {
  const fail = (message: string) => ({ ok: false as const, message });
  if (!isObject(raw)) return fail(`"${name}" must be {"host": …, "port": …, "senderCompId": …, "targetCompId": …}`);
  for (const key of ['username', 'password', 'Username', 'Password']) {
    if (key in raw)
      return fail(
        `"${name}"."${key}": the logon credentials never go in this file; give them in ${FIX_CREDENTIAL_VARIABLES.username} and ${FIX_CREDENTIAL_VARIABLES.password} or a --credentials file`,
      );
  }
  const text = (key: string, required: boolean): Result<string | null> => {
    const value = raw[key];
    if (value === undefined || value === null)
      return required ? fail(`"${name}"."${key}" is required`) : { ok: true, value: null };
    if (typeof value !== 'string' || value.trim() === '') return fail(`"${name}"."${key}" must be a non-empty string`);
    return { ok: true, value: value.trim() };
  };
  const host = text('host', true);
  if (!host.ok) return host;
  const port = raw.port;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535)
    return fail(`"${name}"."port" must be a port number (1-65535)`);
  const sender = text('senderCompId', true);
  if (!sender.ok) return sender;
  const target = text('targetCompId', true);
  if (!target.ok) return target;
  const senderSub = text('senderSubId', false);
  if (!senderSub.ok) return senderSub;
  const targetSub = text('targetSubId', false);
  if (!targetSub.ok) return targetSub;
  const heartbeat = raw.heartbeatSeconds ?? 30;
  if (typeof heartbeat !== 'number' || !Number.isInteger(heartbeat) || heartbeat < 1 || heartbeat > 300)
    return fail(`"${name}"."heartbeatSeconds" must be a whole number of seconds from 1 to 300`);
  if (raw.tls !== undefined && typeof raw.tls !== 'boolean') return fail(`"${name}"."tls" must be true or false`);
  if (raw.resetOnLogon !== undefined && typeof raw.resetOnLogon !== 'boolean')
    return fail(`"${name}"."resetOnLogon" must be true or false`);
  return {
    ok: true,
    value: {
      host: host.value!,
      port,
      // TLS unless the file says otherwise: without it the logon's password crosses the network in clear.
      tls: raw.tls !== false,
      senderCompId: sender.value!,
      targetCompId: target.value!,
      // cTrader names the session kind in the sub ids.
      senderSubId: senderSub.value ?? (dialect === 'ctrader' ? name.toUpperCase() : null),
      targetSubId: targetSub.value ?? (dialect === 'ctrader' ? name.toUpperCase() : null),
      heartbeatSeconds: heartbeat,
      resetOnLogon: (raw.resetOnLogon as boolean | undefined) ?? dialect === 'ctrader',
    },
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
