import type { TransportOptions } from './channel-transports.js';

/** The transports' settings when the server is given none (SIGNALGATE_TELEGRAM_API_URL unset). */
export const DEFAULT_TRANSPORT: TransportOptions = { telegramApiUrl: 'https://api.telegram.org', timeoutMs: 10_000 };
