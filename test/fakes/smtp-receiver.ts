import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

/** One message the SMTP server took: its envelope, its decoded subject and text, how it came. */
export interface ReceivedMail {
  mailFrom: string;
  rcptTo: string[];
  headers: Record<string, string>;
  subject: string;
  text: string;
  /** Whether the connection was TLS when the message was sent (STARTTLS or TLS from the start). */
  secure: boolean;
  user: string | null;
}

/**
 * A real SMTP server (`smtp-server`, from nodemailer's authors) on a free loopback port: TLS from
 * the start or plain with STARTTLS offered, a login checked when `login` is set, and any address
 * in `refused` answered `550 5.1.1 mailbox unavailable` at RCPT TO, as a real server does.
 */
export class SmtpReceiver {
  readonly mails: ReceivedMail[] = [];
  readonly refused = new Set<string>();
  private readonly server: SMTPServer;
  port = 0;

  constructor(opts: {
    tls: { key: string; cert: string };
    secure?: boolean;
    login?: { user: string; pass: string };
    noStartTls?: boolean;
  }) {
    const options: SMTPServerOptions = {
      secure: opts.secure ?? false,
      key: opts.tls.key,
      cert: opts.tls.cert,
      authOptional: opts.login === undefined,
      // A server without STARTTLS (an old relay, or a man in the middle stripping it).
      disabledCommands: opts.noStartTls ? ['STARTTLS'] : [],
      ...(opts.noStartTls && { allowInsecureAuth: true }),
      logger: false,
      onAuth: (auth, _session, done) => {
        if (opts.login && auth.username === opts.login.user && auth.password === opts.login.pass) {
          done(null, { user: auth.username });
        } else done(Object.assign(new Error('5.7.8 Authentication credentials invalid'), { responseCode: 535 }));
      },
      onRcptTo: (address, _session, done) => {
        if (this.refused.has(address.address)) {
          done(Object.assign(new Error('5.1.1 mailbox unavailable'), { responseCode: 550 }));
        } else done();
      },
      onData: (stream, session, done) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const mail = parseMail(Buffer.concat(chunks).toString('utf8'));
          this.mails.push({
            ...mail,
            mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            rcptTo: session.envelope.rcptTo.map((r) => r.address),
            secure: session.secure,
            user: (session.user as string | undefined) ?? null,
          });
          done();
        });
      },
    };
    this.server = new SMTPServer(options);
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.server.address() as AddressInfo).port;
    return this;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Headers (unfolded, encoded words decoded) and the text body (quoted-printable or base64 decoded). */
function parseMail(raw: string): { headers: Record<string, string>; subject: string; text: string } {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const body = raw.slice(split + 4);
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = decodeWords(line.slice(colon + 1).trim());
  }
  const encoding = (headers['content-transfer-encoding'] ?? '7bit').toLowerCase();
  let text = body;
  if (encoding === 'quoted-printable') text = decodeQuotedPrintable(body.replace(/=\r\n/g, ''));
  else if (encoding === 'base64') text = Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return { headers, subject: headers.subject ?? '', text: text.replace(/\r\n/g, '\n').replace(/\n$/, '') };
}

function decodeWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_m, _charset: string, kind: string, data: string) =>
      kind.toUpperCase() === 'B'
        ? Buffer.from(data, 'base64').toString('utf8')
        : decodeQuotedPrintable(data.replace(/_/g, ' ')),
    );
}

function decodeQuotedPrintable(value: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < value.length; i++) {
    if (value[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(value.slice(i + 1, i + 3))) {
      bytes.push(parseInt(value.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(...Buffer.from(value[i]!, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}
