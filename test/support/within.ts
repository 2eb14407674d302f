/** Fails instead of hanging until the test's own timeout when `promise` never settles. */
export function within<T>(promise: Promise<T>, what: string, ms = 5_000): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms))]);
}
