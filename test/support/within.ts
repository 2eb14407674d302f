/**
 * Fails instead of hanging until the test's own timeout when `promise` never settles. A guard
 * against a hang, not a deadline: generous, so a loaded machine never trips it.
 */
export function within<T>(promise: Promise<T>, what: string, ms = 20_000): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms)),
  ]);
}
