import type { Config } from '../config/config.js';
import { publicUrlFromEnv } from '../config/config.js';
import type { Store } from '../store/store.js';

/** The settings entry holding the public URL the server last started with. */
const PUBLIC_URL_SETTING = 'public_url';

/**
 * Records the public URL the server renders inbound URLs with, so the CLI, a process of its own
 * that knows neither the server's SIGNALGATE_PUBLIC_URL nor its port, prints the same URLs.
 * Each start records its own; with several instances on one database the last to start wins.
 */
export async function recordPublicUrl(store: Store, renderedUrl: string): Promise<void> {
  await store.settings.set(PUBLIC_URL_SETTING, renderedUrl);
}

/**
 * The public URL the CLI renders inbound URLs with: SIGNALGATE_PUBLIC_URL when the operator set
 * it for the CLI; else the one the server recorded when it started; else the default
 * (`http://HOST:PORT` from the CLI's own environment), when no server has started on this store.
 */
export async function cliPublicUrl(
  store: Store,
  config: Config,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  return publicUrlFromEnv(env) ?? (await store.settings.get(PUBLIC_URL_SETTING)) ?? config.publicUrl;
}
