import type { Source } from './records.js';
import type { SourcePatch } from './store.js';
import { storedAuthKey } from './auth-key-hash.js';

/**
 * The source after `patch`, at its next revision: absent fields keep their value;
 * `hmacSecret: null` removes the secret.
 */
export function patchedSource(source: Source, patch: SourcePatch): Source {
  return {
    ...source,
    revision: source.revision + 1,
    ...(patch.name !== undefined && { name: patch.name }),
    ...(patch.active !== undefined && { active: patch.active }),
    ...(patch.hmacSecret !== undefined && { hmacSecret: patch.hmacSecret }),
    ...(patch.agentIds !== undefined && { agentIds: [...patch.agentIds] }),
    ...(patch.maxSignalAgeSeconds !== undefined && { maxSignalAgeSeconds: patch.maxSignalAgeSeconds }),
    ...(patch.duplicateWindowSeconds !== undefined && { duplicateWindowSeconds: patch.duplicateWindowSeconds }),
    ...(patch.allowedIps !== undefined && { allowedIps: [...patch.allowedIps] }),
    ...(patch.authKey !== undefined && storedAuthKey(patch.authKey)),
  };
}
