/** The least strength an admin or metrics token may have, in bits. */
export const MIN_TOKEN_BITS = 128;

/** What an operator types to make a token that passes. */
export const MAKE_TOKEN_COMMAND = 'openssl rand -base64 32';

/**
 * A token's strength as this rule counts it: its length times log2 of how many different
 * characters it uses. It is an upper bound (it cannot tell a random string from a phrase), so it
 * refuses what is plainly weak — short tokens, few distinct characters, the documentation's own
 * placeholder — and lets a random one through: `openssl rand -base64 32` (44 characters) and
 * `openssl rand -hex 32` (64) always pass.
 */
export function tokenBits(token: string): number {
  const characters = [...token];
  const distinct = new Set(characters).size;
  return distinct < 2 ? 0 : characters.length * Math.log2(distinct);
}

/** Why the token in `setting` is too weak to accept, with how to make one; null when it is strong enough. */
export function weakTokenProblem(setting: string, token: string): string | null {
  const bits = tokenBits(token);
  if (bits >= MIN_TOKEN_BITS) return null;
  return (
    `${setting} is too weak to guard the service (about ${Math.floor(bits)} bits; at least ${MIN_TOKEN_BITS} are needed, ` +
    `counted as its length times log2 of how many different characters it uses); ` +
    `make one with \`${MAKE_TOKEN_COMMAND}\` and set ${setting} to it`
  );
}
