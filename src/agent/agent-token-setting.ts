import { readSecretFile, readSecretText } from '../files/secret-file.js';

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

/**
 * `--tokens-file`: several agents' tokens, one per line, each an agent of its own in one process.
 * Blank lines and lines starting with `#` are skipped; a token given twice is refused, since two
 * agents on one token would share its account.
 */
export function readAgentTokensFile(
  file: string,
  flags: { token?: string; tokenFile?: string },
  env: NodeJS.ProcessEnv,
): { ok: true; tokens: { token: string; line: number }[]; warnings: string[] } | { ok: false; message: string } {
  const other =
    flags.token !== undefined
      ? '--token'
      : flags.tokenFile !== undefined
        ? '--token-file'
        : env[AGENT_TOKEN_VARIABLE]?.trim()
          ? AGENT_TOKEN_VARIABLE
          : null;
  if (other !== null)
    return {
      ok: false,
      message: `give the agent tokens one way: --tokens-file FILE (several agents) or ${other} (one agent), not both`,
    };
  const read = readSecretText('--tokens-file', file);
  if (!read.ok) return read;
  const tokens: { token: string; line: number }[] = [];
  const lineOf = new Map<string, number>();
  const lines = read.text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const token = lines[i]!.trim();
    if (token === '' || token.startsWith('#')) continue;
    if (/\s/.test(token))
      return {
        ok: false,
        message: `--tokens-file ${file}: line ${i + 1} holds more than a token; write one agent token per line`,
      };
    const earlier = lineOf.get(token);
    if (earlier !== undefined)
      return {
        ok: false,
        message: `--tokens-file ${file}: lines ${earlier} and ${i + 1} hold the same token; an agent runs once, so remove one`,
      };
    lineOf.set(token, i + 1);
    tokens.push({ token, line: i + 1 });
  }
  if (tokens.length === 0)
    return { ok: false, message: `--tokens-file ${file} holds no token; write one agent token per line` };
  return { ok: true, tokens, warnings: read.warnings };
}
