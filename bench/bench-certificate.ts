import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** A certificate and key the HTTPS rows of the benchmark are served with. */
export interface BenchCertificate {
  certFile: string;
  keyFile: string;
  pem: string;
}

/**
 * A self-signed P-256 certificate for 127.0.0.1, made with the openssl CLI in `dir`. P-256 is
 * what most public CAs issue by default today, so the handshake cost is a realistic one.
 */
export function makeBenchCertificate(dir: string): BenchCertificate {
  const certFile = path.join(dir, 'bench.crt');
  const keyFile = path.join(dir, 'bench.key');
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
      '1',
      '-subj',
      '/CN=signalgate-bench',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  return { certFile, keyFile, pem: readFileSync(certFile, 'utf8') };
}
