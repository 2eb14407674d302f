import { rmSync } from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../files/atomic-file.js';
import { createDirectory } from '../files/create-directory.js';
import { replaceAdminToken } from '../security/admin-token.js';
import { newAdminToken } from '../security/random-secrets.js';
import type { Store } from '../store/store.js';

/** Where a generated admin token is written: the data directory, readable by its owner only. */
export function adminTokenFile(dataDir: string): string {
  return path.join(dataDir, 'admin-token');
}

/**
 * Writes a generated admin token to its file (mode 0600, replaced atomically), never to a log
 * or a terminal whose scrollback and journal keep it; answers the file's path.
 */
export async function writeAdminTokenFile(dataDir: string, token: string): Promise<string> {
  createDirectory(dataDir, 0o700);
  const file = adminTokenFile(dataDir);
  await writeFileAtomic(file, `${token}\n`);
  return file;
}

/** Removes the file of a generated token that no longer works (SIGNALGATE_ADMIN_TOKEN is set). */
export function removeAdminTokenFile(dataDir: string): void {
  rmSync(adminTokenFile(dataDir), { force: true });
}

/**
 * A new generated admin token: written to its file first, then its digest stored in place of the
 * old one, so that at no moment is the token in force one nobody can read. Answers the file.
 */
export async function resetAdminToken(store: Store, dataDir: string): Promise<string> {
  const token = newAdminToken();
  const file = await writeAdminTokenFile(dataDir, token);
  await replaceAdminToken(store, token);
  return file;
}
