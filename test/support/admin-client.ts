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

/** Every signal id in a source's log, following the `next` cursor page by page. */
export async function loggedSignalIds(baseUrl: string, token: string, sourceId: string): Promise<Set<string>> {
  const ids = new Set<string>();
  let before = '';
  for (;;) {
    const page = await adminRequest(baseUrl, token, 'GET', `/api/admin/signals?sourceId=${sourceId}&limit=500${before}`);
    for (const s of page.body.signals as Array<{ id: string }>) ids.add(s.id);
    if (page.body.next === null) return ids;
    before = `&before=${page.body.next}`;
  }
}
