import net from 'node:net';
import tls from 'node:tls';

/**
 * Whether the server at `host:port` answers a TLS handshake: how the agent tells a server that
 * speaks HTTPS, reached with an http:// URL, from one that is down (both end the plain request
 * with a reset). Any certificate will do: this only asks which protocol the port speaks.
 */
export function speaksTls(host: string, port: number, timeoutMs = 2_000): Promise<boolean> {
  return new Promise((resolve) => {
    const bare = host.replace(/^\[|\]$/g, ''); // a URL's IPv6 host comes in brackets
    const socket = tls.connect({
      host: bare,
      port,
      ...(net.isIP(bare) === 0 && { servername: bare }),
      rejectUnauthorized: false,
    });
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('secureConnect', () => done(true));
    socket.once('error', () => done(false));
  });
}
