import { readFileSync, statSync } from 'node:fs';
import type { CcxtCredentials, MarketKind, PositionMode } from './ccxt-venue.js';

/** The `signalgate agent --venue ccxt` flags (beside the common ones). */
export interface CcxtFlags {
  exchange?: string;
  market?: string;
  positionMode?: string;
  sandbox?: boolean;
  dryRun?: boolean;
  credentials?: string;
  proxyUrl?: string;
}

export interface CcxtSettings {
  exchange: string;
  market: MarketKind;
  positionMode: PositionMode;
  sandbox: boolean;
  dryRun: boolean;
  credentials: CcxtCredentials | null;
  proxyUrl: string | null;
  /** Said at warn on start (a credentials file others can read). */
  warnings: string[];
}

/** Environment variables the API keys may come from. */
export const CREDENTIAL_VARIABLES = {
  apiKey: 'SIGNALGATE_CCXT_API_KEY',
  secret: 'SIGNALGATE_CCXT_SECRET',
  password: 'SIGNALGATE_CCXT_PASSWORD',
} as const;

/**
 * Checks the CCXT flags and finds the API keys: in the file `--credentials` names (JSON
 * `{"apiKey": …, "secret": …, "password"?: …}`), else in the environment. Never from a flag's
 * value: any user of the machine can read a process's arguments. Without keys only `--dry-run`
 * runs (it reads public market data; balance and positions need keys).
 */
export function readCcxtSettings(
  flags: CcxtFlags,
  env: NodeJS.ProcessEnv,
): { ok: true; settings: CcxtSettings } | { ok: false; message: string } {
  const fail = (message: string) => ({ ok: false as const, message });
  const exchange = flags.exchange?.trim().toLowerCase();
  if (!exchange)
    return fail('--venue ccxt needs --exchange ID, the CCXT exchange id (binance, binanceusdm, bybit, okx…)');
  const market = (flags.market ?? 'swap').trim().toLowerCase();
  if (market !== 'spot' && market !== 'swap') return fail(`--market must be spot or swap, got "${flags.market}"`);
  const positionMode = (flags.positionMode ?? 'oneway').trim().toLowerCase();
  if (positionMode !== 'oneway' && positionMode !== 'hedge')
    return fail(`--position-mode must be oneway or hedge, got "${flags.positionMode}"`);
  if (positionMode === 'hedge' && market === 'spot')
    return fail('--position-mode hedge applies to swap markets only; spot markets hold coins, not positions');
  const warnings: string[] = [];
  let credentials: CcxtCredentials | null = null;
  if (flags.credentials !== undefined) {
    let text: string;
    try {
      text = readFileSync(flags.credentials, 'utf8');
      if ((statSync(flags.credentials).mode & 0o077) !== 0) {
        warnings.push(`the credentials file ${flags.credentials} can be read by other users; chmod 600 it`);
      }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return fail(
        `--credentials ${flags.credentials}: ${code === 'ENOENT' ? 'no such file' : (error as Error).message}`,
      );
    }
    let parsed: Partial<Record<'apiKey' | 'secret' | 'password', unknown>>;
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      // The parser's message may quote the file's content: the secret stays out of it.
      return fail(
        `--credentials ${flags.credentials} is not JSON; write {"apiKey": "…", "secret": "…"} (and "password" where the exchange wants a passphrase)`,
      );
    }
    if (typeof parsed?.apiKey !== 'string' || typeof parsed.secret !== 'string' || !parsed.apiKey || !parsed.secret) {
      return fail(
        `--credentials ${flags.credentials} needs the strings "apiKey" and "secret" (and "password" where the exchange wants a passphrase)`,
      );
    }
    credentials = {
      apiKey: parsed.apiKey,
      secret: parsed.secret,
      ...(typeof parsed.password === 'string' && { password: parsed.password }),
    };
  } else {
    const apiKey = env[CREDENTIAL_VARIABLES.apiKey]?.trim();
    const secret = env[CREDENTIAL_VARIABLES.secret]?.trim();
    const password = env[CREDENTIAL_VARIABLES.password]?.trim();
    if (apiKey && secret) credentials = { apiKey, secret, ...(password && { password }) };
    else if (apiKey || secret)
      return fail(`give both ${CREDENTIAL_VARIABLES.apiKey} and ${CREDENTIAL_VARIABLES.secret}, or neither`);
  }
  if (credentials === null && !flags.dryRun) {
    return fail(
      `--venue ccxt needs the exchange's API keys: --credentials FILE (JSON with apiKey and secret) or ${CREDENTIAL_VARIABLES.apiKey} and ${CREDENTIAL_VARIABLES.secret} in the environment`,
    );
  }
  let proxyUrl: string | null = null;
  if (flags.proxyUrl !== undefined) {
    if (!/^https?:\/\/[^/]+\/?/i.test(flags.proxyUrl))
      return fail(`--proxy-url must be an http:// or https:// URL, got "${flags.proxyUrl}"`);
    proxyUrl = flags.proxyUrl.endsWith('/') ? flags.proxyUrl : `${flags.proxyUrl}/`;
  }
  return {
    ok: true,
    settings: {
      exchange,
      market,
      positionMode,
      sandbox: flags.sandbox === true,
      dryRun: flags.dryRun === true,
      credentials,
      proxyUrl,
      warnings,
    },
  };
}
