// The admin API, called with the session cookie (same origin; the browser adds the Origin header
// the server checks on every change). No token is kept in the page.

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail ?? `the server answered ${status}`);
    this.status = status;
    this.problem = problem ?? null;
  }

  /** Every problem of the answer (the first, or the list `errors`). */
  get problems() {
    if (!this.problem) return [{ code: 'ERROR', detail: this.message }];
    return this.problem.errors ?? [{ code: this.problem.code, param: this.problem.param, detail: this.problem.detail }];
  }
}

export async function api(method, path, body) {
  const res = await fetch(path, {
    method,
    credentials: 'same-origin',
    cache: 'no-store',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!res.ok) {
    const error = new ApiError(res.status, parsed);
    // The session ended (signed out elsewhere, expired, or the admin token changed).
    if (res.status === 401 && !path.startsWith('/api/dashboard/session'))
      window.dispatchEvent(new CustomEvent('signed-out'));
    throw error;
  }
  return parsed;
}

/** Every item of a paged list (`{items, next}` with `before=` cursors), up to `max`. */
export async function listAll(path, key, max = 500) {
  const items = [];
  let before = null;
  for (;;) {
    const sep = path.includes('?') ? '&' : '?';
    const page = await api('GET', `${path}${sep}limit=100${before ? `&before=${encodeURIComponent(before)}` : ''}`);
    items.push(...page[key]);
    if (!page.next || items.length >= max) return items;
    before = page.next;
  }
}
