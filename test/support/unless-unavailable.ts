/**
 * `send` again while it is answered 503 STORE_UNAVAILABLE, as the problem tells a client to:
 * for a test's setup, which is not about the database keeping up. A neighbouring test file's
 * bulk load can hold PostgreSQL past the service's 2.5 s wait for a connection on a loaded
 * machine; the store recorded nothing, so sending again is safe.
 */
export async function unlessUnavailable<T extends { status: number; body: any }>(send: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const answer = await send();
    if (answer.status !== 503 || answer.body?.code !== 'STORE_UNAVAILABLE' || attempt >= 10) return answer;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
