import { createHmac } from 'node:crypto';
import type { NotificationChannel } from '../store/notifications.js';
import { discordBody, emailMessage, slackBody, telegramBody, webhookBody } from './channel-formats.js';
import { sendEmail } from './email-transport.js';
import type { NotificationText } from './notification-text.js';
import { TransportError } from './transport-error.js';

export { TransportError };

/** Where the transports send: the Telegram Bot API's base URL is a setting (tests point it at a local server). */
export interface TransportOptions {
  telegramApiUrl: string;
  timeoutMs: number;
}

/** HMAC-SHA256 of the exact bytes sent, as the inbound side checks its senders: `sha256=<hex>`. */
export function webhookSignature(secret: string, body: Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/**
 * Sends one message through the channel; resolves once the receiver accepted it (2xx, and for
 * Telegram `ok: true`; for e-mail, the SMTP server's 250), throws TransportError otherwise.
 */
export async function sendThrough(
  channel: NotificationChannel,
  text: NotificationText,
  messageId: number,
  options: TransportOptions,
): Promise<void> {
  const secrets = Object.values(channel.secrets);
  const scrub = (message: string) => secrets.reduce((m, s) => (s.length >= 4 ? m.split(s).join('…') : m), message);
  try {
    switch (channel.kind) {
      case 'webhook': {
        const raw = Buffer.from(JSON.stringify(webhookBody(text, messageId)));
        const headers: Record<string, string> = {
          'content-type': 'application/json',
          'x-signalgate-event': text.kind,
          'x-signalgate-delivery': String(messageId),
        };
        if (channel.secrets.signingSecret)
          headers['x-signature'] = webhookSignature(channel.secrets.signingSecret, raw);
        await post(requiredSecret(channel, 'url'), raw, headers, options.timeoutMs);
        return;
      }
      case 'telegram': {
        const base = options.telegramApiUrl.replace(/\/+$/, '');
        const url = `${base}/bot${requiredSecret(channel, 'botToken')}/sendMessage`;
        const body = telegramBody(text, String(channel.settings.chatId ?? ''));
        const answer = await post(url, Buffer.from(JSON.stringify(body)), jsonHeaders, options.timeoutMs);
        const parsed = JSON.parse(answer || '{}') as { ok?: boolean; description?: string };
        if (parsed.ok !== true) throw new TransportError(`Telegram answered: ${parsed.description ?? 'not ok'}`);
        return;
      }
      case 'discord':
        await post(
          requiredSecret(channel, 'url'),
          Buffer.from(JSON.stringify(discordBody(text))),
          jsonHeaders,
          options.timeoutMs,
        );
        return;
      case 'slack':
        await post(
          requiredSecret(channel, 'url'),
          Buffer.from(JSON.stringify(slackBody(text))),
          jsonHeaders,
          options.timeoutMs,
        );
        return;
      case 'email':
        await sendEmail(channel, emailMessage(text), options.timeoutMs);
        return;
    }
  } catch (error) {
    if (error instanceof TransportError) throw new TransportError(scrub(error.message), error.retryAfterMs);
    throw new TransportError(scrub(describe(error)));
  }
}

const jsonHeaders = { 'content-type': 'application/json' };

function requiredSecret(channel: NotificationChannel, name: string): string {
  const value = channel.secrets[name];
  if (!value) throw new TransportError(`the channel has no ${name}; set it again`);
  return value;
}

/** POSTs and answers the body of a 2xx; anything else is a TransportError saying what came back. */
async function post(url: string, body: Buffer, headers: Record<string, string>, timeoutMs: number): Promise<string> {
  const response = await fetch(url, { method: 'POST', body, headers, signal: AbortSignal.timeout(timeoutMs) });
  const answer = await response.text();
  if (response.ok) return answer;
  const retryAfter = retryAfterMs(response, answer);
  let reason = answer.slice(0, 200);
  try {
    const parsed = JSON.parse(answer) as { description?: unknown; message?: unknown };
    reason = String(parsed.description ?? parsed.message ?? reason);
  } catch {
    // Not JSON: the start of the text says it.
  }
  throw new TransportError(`HTTP ${response.status} from the receiver${reason ? `: ${reason}` : ''}`, retryAfter);
}

function retryAfterMs(response: Response, answer: string): number | null {
  const header = Number(response.headers.get('retry-after'));
  if (Number.isFinite(header) && header > 0) return header * 1000;
  try {
    const parsed = JSON.parse(answer) as { parameters?: { retry_after?: number }; retry_after?: number };
    const seconds = parsed.parameters?.retry_after ?? parsed.retry_after;
    if (typeof seconds === 'number' && seconds > 0) return seconds * 1000;
  } catch {
    // No hint.
  }
  return null;
}

function describe(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') return 'the receiver did not answer in time';
  const cause = (error as { cause?: { code?: string; message?: string } } | null)?.cause;
  if (cause?.code) return `could not reach the receiver (${cause.code})`;
  return error instanceof Error ? error.message : String(error);
}
