import { TEST_ADMIN_TOKEN } from './test-tokens.js';

/** The admin API as an operator calls it: bearer token, JSON in, status and parsed JSON out. */
export async function adminRequest(
  baseUrl: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(baseUrl + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

/** The answer's parsed body alone, asked with the tests' admin token: set-up and reads whose status a test does not check. */
export async function adminBody(baseUrl: string, method: string, path: string, body?: unknown): Promise<any> {
  return (await adminRequest(baseUrl, TEST_ADMIN_TOKEN, method, path, body)).body;
}

/** Every entry of a source's log, following the `next` cursor page by page. */
export async function loggedSignals(
  baseUrl: string,
  token: string,
  sourceId: string,
): Promise<Array<{ id: string; rawBody: string }>> {
  const signals: Array<{ id: string; rawBody: string }> = [];
  let before = '';
  for (;;) {
    const page = await adminRequest(
      baseUrl,
      token,
      'GET',
      `/api/admin/signals?sourceId=${sourceId}&limit=500${before}`,
    );
    signals.push(...(page.body.signals as Array<{ id: string; rawBody: string }>));
    if (page.body.next === null) return signals;
    before = `&before=${page.body.next}`;
  }
}

/** Every signal id in a source's log. */
export async function loggedSignalIds(baseUrl: string, token: string, sourceId: string): Promise<Set<string>> {
  return new Set((await loggedSignals(baseUrl, token, sourceId)).map((s) => s.id));
}
