import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';

export interface TestCertificate {
  certFile: string;
  keyFile: string;
  pem: string;
}

/**
 * A self-signed certificate for 127.0.0.1 and localhost, made with the openssl CLI (as an
 * operator would for a test setup), written to `dir` as NAME.crt and NAME.key.
 */
export function makeCertificate(dir: string, name: string): TestCertificate {
  const certFile = path.join(dir, `${name}.crt`);
  const keyFile = path.join(dir, `${name}.key`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  return { certFile, keyFile, pem: readFileSync(certFile, 'utf8') };
}

export interface HttpsAnswer {
  status: number;
  body: any;
  /** The SHA-256 fingerprint of the certificate the server presented on this connection. */
  fingerprint: string;
  headers: import('node:http').IncomingHttpHeaders;
  /** Whether the request went over a connection that an earlier request had opened. */
  reusedConnection: boolean;
}

/** One HTTPS request that trusts `ca` only; `agent` keeps connections open between calls. */
export function httpsRequest(
  url: string,
  opts: {
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    ca: string | string[];
    agent?: https.Agent;
  },
): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      { method: opts.method ?? 'GET', headers: opts.headers, ca: opts.ca, agent: opts.agent ?? false },
      (res) => {
        const fingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256;
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          let body: unknown = text;
          try {
            body = text === '' ? null : JSON.parse(text);
          } catch {
            body = text;
          }
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body,
            fingerprint,
            reusedConnection: req.reusedSocket,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** The SHA-256 fingerprint of a PEM certificate, written as node's TLS sockets write it. */
export function fingerprintOf(pem: string): string {
  return new X509Certificate(pem).fingerprint256;
}
