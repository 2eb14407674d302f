import { readSecretFile } from '../files/secret-file.js';

/** The environment variable the agent token may be given in. */
export const AGENT_TOKEN_VARIABLE = 'SIGNALGATE_AGENT_TOKEN';

export type AgentTokenRead = { ok: true; token: string; warnings: string[] } | { ok: false; message: string };

/**
 * The agent token, from `--token-file`, `--token` or SIGNALGATE_AGENT_TOKEN, in that order. The
 * flag still works, with a warning: on the command line the token is in the process list, which
 * every user of the machine can read, and in the shell's history.
 */
export function readAgentToken(flags: { token?: string; tokenFile?: string }, env: NodeJS.ProcessEnv): AgentTokenRead {
  if (flags.token !== undefined && flags.tokenFile !== undefined) {
    return {
      ok: false,
      message: `give the agent token one way: --token-file FILE or ${AGENT_TOKEN_VARIABLE}, not --token as well`,
    };
  }
  if (flags.tokenFile !== undefined) {
    const read = readSecretFile('--token-file', flags.tokenFile);
    if (!read.ok) return read;
    return { ok: true, token: read.secret.trim(), warnings: read.warnings };
  }
  if (flags.token !== undefined) {
    const token = flags.token.trim();
    if (!token)
      return {
        ok: false,
        message: `--token is empty; give the agent token in ${AGENT_TOKEN_VARIABLE} or a file named by --token-file`,
      };
    return {
      ok: true,
      token,
      warnings: [
        `--token puts the agent token in the process list, where every user of this machine can read it, and in the shell's history; give it in ${AGENT_TOKEN_VARIABLE} or in a file named by --token-file (chmod 600) instead`,
      ],
    };
  }
  const token = env[AGENT_TOKEN_VARIABLE]?.trim();
  if (!token)
    return { ok: false, message: `give the agent token in ${AGENT_TOKEN_VARIABLE} or in a file named by --token-file` };
  return { ok: true, token, warnings: [] };
}
