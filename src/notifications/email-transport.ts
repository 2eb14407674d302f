import type { NotificationChannel } from '../store/notifications.js';
import { TransportError } from './transport-error.js';

/** How the SMTP connection is protected: STARTTLS on a plain port, TLS from the start, or none. */
export type SmtpSecurity = 'starttls' | 'tls' | 'none';
export const SMTP_SECURITY: SmtpSecurity[] = ['starttls', 'tls', 'none'];
/** The usual port of each: submission with STARTTLS, submissions (implicit TLS), plain SMTP. */
export const SMTP_DEFAULT_PORT: Record<SmtpSecurity, number> = { starttls: 587, tls: 465, none: 25 };

/** The recipients of an e-mail channel's `to`: addresses separated by commas. */
export function recipients(to: string): string[] {
  return to
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a !== '');
}

/**
 * Sends one e-mail through the channel's SMTP server with nodemailer, on a connection of its own
 * (a notification is rare; a pooled connection would outlive a changed password). STARTTLS is
 * required, not merely tried, so a server that stops offering it cannot downgrade us to
 * plaintext; certificates are verified against the system's CAs (NODE_EXTRA_CA_CERTS adds a
 * private one). Resolves once the server accepted the message for at least one recipient.
 */
export async function sendEmail(
  channel: NotificationChannel,
  message: { subject: string; text: string },
  timeoutMs: number,
): Promise<void> {
  const settings = channel.settings;
  const security = (settings.security as SmtpSecurity | undefined) ?? 'starttls';
  const host = String(settings.host ?? '');
  const port = Number(settings.port ?? SMTP_DEFAULT_PORT[security]);
  const username = settings.username === undefined ? '' : String(settings.username);
  const password = channel.secrets.password ?? '';
  // Loaded on the first e-mail, not with the server: most servers send none (decision 0049-test-time-shared-workers).
  const { default: nodemailer } = await import('nodemailer');
  const transport = nodemailer.createTransport({
    host,
    port,
    secure: security === 'tls',
    requireTLS: security === 'starttls',
    ignoreTLS: security === 'none',
    ...(username !== '' && { auth: { user: username, pass: password } }),
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  try {
    await transport.sendMail({
      from: String(settings.from ?? ''),
      to: recipients(String(settings.to ?? '')),
      subject: message.subject,
      text: message.text,
    });
  } catch (error) {
    throw new TransportError(smtpProblem(error, host, port));
  } finally {
    transport.close();
  }
}

/** What went wrong, as the SMTP server said it (its code and words) or as the connection failed. */
function smtpProblem(error: unknown, host: string, port: number): string {
  const e = error as { code?: string; command?: string; responseCode?: number; response?: string; message?: string };
  const where = `${host}:${port}`;
  if (/STARTTLS/i.test(e.command ?? '')) {
    return `no STARTTLS at ${where} (it answered ${e.response ?? e.message ?? e.code}); use security tls, or none for a relay without a login`;
  }
  if (typeof e.responseCode === 'number') {
    const said = (e.response ?? e.message ?? '').replace(/\s+/g, ' ').slice(0, 200);
    return `SMTP ${e.responseCode} from ${where}: ${said}`;
  }
  if (e.code === 'ETLS' || /STARTTLS/i.test(e.message ?? ''))
    return `no TLS with ${where}: ${e.message ?? 'the server does not offer STARTTLS'}`;
  if (e.code === 'ETIMEDOUT') return `the SMTP server ${where} did not answer in time`;
  if (e.code === 'ESOCKET' || e.code === 'ECONNECTION' || e.code === 'EDNS')
    return `could not reach the SMTP server ${where}: ${e.message ?? e.code}`;
  return `e-mail not sent through ${where}: ${e.message ?? String(error)}`;
}
