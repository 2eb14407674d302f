import { readFileSync, statSync } from 'node:fs';

export type SecretFileRead = { ok: true; secret: string; warnings: string[] } | { ok: false; message: string };

/**
 * Reads a secret kept in a file rather than on the command line, where every user of the
 * machine sees it in the process list. `-` is standard input. The file holds the secret on one
 * line; one line end after it is dropped. A file others may read is taken, with a warning.
 */
export function readSecretFile(flag: string, file: string): SecretFileRead {
  const read = readSecretText(flag, file);
  if (!read.ok) return read;
  const secret = read.text.replace(/\r?\n$/, '');
  if (secret === '') return { ok: false, message: `${flag} ${file} is empty; write the secret in it, on one line` };
  if (/[\r\n]/.test(secret))
    return { ok: false, message: `${flag} ${file} holds more than one line; write only the secret in it, on one line` };
  return { ok: true, secret, warnings: read.warnings };
}

/** A file of secrets as it is (`-`: standard input), with a warning when others may read it. */
export function readSecretText(
  flag: string,
  file: string,
): { ok: true; text: string; warnings: string[] } | { ok: false; message: string } {
  const warnings: string[] = [];
  try {
    if (file === '-') return { ok: true, text: readFileSync(0, 'utf8'), warnings };
    const text = readFileSync(file, 'utf8');
    if ((statSync(file).mode & 0o077) !== 0)
      warnings.push(`${flag} ${file} can be read by other users of this machine; chmod 600 it`);
    return { ok: true, text, warnings };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, message: `${flag} ${file}: ${code === 'ENOENT' ? 'no such file' : (error as Error).message}` };
  }
}
