import { readSecretFile } from '../../files/secret-file.js';

/** What `sources create` and `sources update` were given for the source's HMAC secret. */
export interface HmacSecretFlags {
  hmacSecret?: string;
  hmacSecretFile?: string;
}

/**
 * The secret from `--hmac-secret-file` (`-`: standard input) or `--hmac-secret`, said on
 * standard error when it cannot be read; undefined when neither was given. The flag still works,
 * with a warning: on the command line the secret is in the process list, which every user of
 * the machine can read, and in the shell's history.
 */
export function hmacSecretOption(flags: HmacSecretFlags): { ok: true; secret: string | undefined } | { ok: false } {
  const warn = (message: string) => process.stderr.write(`signalgate: warning: ${message}\n`);
  if (flags.hmacSecretFile !== undefined) {
    const read = readSecretFile('--hmac-secret-file', flags.hmacSecretFile);
    if (!read.ok) {
      process.stderr.write(`signalgate: ${read.message}\n`);
      process.exitCode = 1;
      return { ok: false };
    }
    for (const warning of read.warnings) warn(warning);
    return { ok: true, secret: read.secret };
  }
  if (flags.hmacSecret !== undefined) {
    warn(
      "--hmac-secret puts the source's secret in the process list, where every user of this machine can read it, and in the shell's history; give it with --hmac-secret-file FILE (chmod 600), or --hmac-secret-file - to read it from standard input, instead",
    );
  }
  return { ok: true, secret: flags.hmacSecret };
}
