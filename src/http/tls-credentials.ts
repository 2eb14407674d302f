import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import type { TlsFiles } from '../config/config.js';

/** A certificate and its private key, read and checked, ready for `https.createServer` or `setSecureContext`. */
export interface TlsCredentials {
  cert: Buffer;
  key: Buffer;
  /** What the log says of the certificate: its subject, names and validity. */
  summary: { subject: string; subjectAltName: string | null; validFrom: string; validTo: string; expired: boolean };
}

/** Why the PEM files cannot be served, as a sentence that names the setting to fix. */
export class TlsFilesError extends Error {}

/**
 * Reads SIGNALGATE_TLS_CERT and SIGNALGATE_TLS_KEY and checks them the way a TLS handshake
 * would need them: each file readable and PEM, the key unencrypted and the certificate's. A
 * bad pair is refused here, where the setting can be named, rather than at the first handshake.
 */
export async function readTlsCredentials(files: TlsFiles, now = new Date()): Promise<TlsCredentials> {
  const cert = await readPem(files.certFile, 'SIGNALGATE_TLS_CERT');
  const key = await readPem(files.keyFile, 'SIGNALGATE_TLS_KEY');
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch (error) {
    throw new TlsFilesError(
      `SIGNALGATE_TLS_CERT=${files.certFile} is not a PEM certificate (${reasonOf(error)}); give the file with -----BEGIN CERTIFICATE----- (the full chain, server certificate first)`,
    );
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (error) {
    throw new TlsFilesError(
      `SIGNALGATE_TLS_KEY=${files.keyFile} is not an unencrypted PEM private key (${reasonOf(error)}); give the key file with -----BEGIN PRIVATE KEY----- (decrypt it first with openssl pkey if it asks for a passphrase)`,
    );
  }
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new TlsFilesError(
      `SIGNALGATE_TLS_KEY=${files.keyFile} is not the private key of the certificate in SIGNALGATE_TLS_CERT=${files.certFile}; give the key the certificate was issued for`,
    );
  }
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    throw new TlsFilesError(
      `SIGNALGATE_TLS_CERT=${files.certFile} and SIGNALGATE_TLS_KEY=${files.keyFile} cannot be served together (${reasonOf(error)}); check both files`,
    );
  }
  const validTo = new Date(certificate.validTo);
  return {
    cert,
    key,
    summary: {
      subject: certificate.subject.replaceAll('\n', ', '),
      subjectAltName: certificate.subjectAltName ?? null,
      validFrom: new Date(certificate.validFrom).toISOString(),
      validTo: validTo.toISOString(),
      expired: validTo.getTime() <= now.getTime(),
    },
  };
}

async function readPem(file: string, setting: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (error) {
    throw new TlsFilesError(
      `cannot read ${setting}=${file} (${reasonOf(error)}); check the path and that this user may read it`,
    );
  }
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
