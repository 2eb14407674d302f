import { api, listAll } from '../api.js';
import { ago, field, h, put, when } from '../dom.js';
import { attempt, confirmAction, notice, shownOnce } from '../ui.js';

/** The server pings a connected agent every 15 s, and each answer counts as seen. */
const CONNECTED_WITHIN_MS = 45_000;
const REFRESH_MS = 5_000;

export function agentsView(body) {
  const list = h('div', { class: 'cards' });
  const more = h('div');
  const problems = h('div');
  const once = h('div');
  const accountFilter = h('select', { name: 'account' }, h('option', { value: '' }, 'All accounts'));
  let next = null;
  const cards = new Map();

  const load = async (reset) => {
    if (reset) {
      put(list);
      cards.clear();
      next = null;
    }
    const account = accountFilter.value ? `&accountId=${encodeURIComponent(accountFilter.value)}` : '';
    const page = await attempt(problems, () =>
      api('GET', `/api/admin/agents?limit=20${account}${next ? `&before=${encodeURIComponent(next)}` : ''}`),
    );
    if (!page) return;
    for (const agent of page.agents) {
      const card = agentCard(agent, once, () => load(true));
      cards.set(agent.id, card);
      list.append(card.el);
    }
    if (reset && page.agents.length === 0) list.append(h('p', { class: 'empty' }, 'No agents yet: create one below.'));
    next = page.next;
    put(
      more,
      next ? h('button', { type: 'button', class: 'secondary', onclick: () => load(false) }, 'More agents') : null,
    );
  };
  accountFilter.addEventListener('change', () => load(true));

  const createSlot = h('div');
  put(
    body,
    h('div', { class: 'row filters' }, field('Account', accountFilter)),
    once,
    problems,
    list,
    more,
    createSlot,
  );
  attempt(problems, async () => {
    const accounts = await listAll('/api/admin/accounts', 'accounts');
    for (const a of accounts) accountFilter.append(h('option', { value: a.id }, `${a.name} (${a.id})`));
    put(
      createSlot,
      createForm(accounts, once, () => load(true)),
    );
    await load(true);
  });

  // Balance, positions and presence change while the page is open: each card is read again.
  const timer = setInterval(() => {
    for (const card of cards.values()) card.refresh();
  }, REFRESH_MS);
  return () => clearInterval(timer);
}

function agentCard(agent, once, reload) {
  const el = h('article', { class: 'card agent', 'data-agent': agent.id, 'aria-labelledby': `agt-${agent.id}` });
  const status = h('div');

  const render = () => {
    const connected = agent.lastSeenAt !== null && Date.now() - Date.parse(agent.lastSeenAt) < CONNECTED_WITHIN_MS;
    const presence = connected
      ? h('span', { class: 'badge ok' }, 'connected')
      : h('span', { class: 'badge off' }, agent.lastSeenAt ? `last seen ${ago(agent.lastSeenAt)}` : 'never connected');
    put(
      el,
      h('header', { class: 'row spread' }, h('h2', { id: `agt-${agent.id}` }, agent.name), presence),
      h('p', { class: 'muted mono' }, agent.id, ' · account ', agent.accountId, ' · created ', when(agent.createdAt)),
      stateView(agent.state),
      h(
        'div',
        { class: 'row wrap' },
        h('button', { type: 'button', class: 'secondary', onclick: rotate }, 'Rotate token'),
        h('button', { type: 'button', class: 'danger', onclick: remove }, 'Delete'),
      ),
      status,
    );
  };

  const rotate = async () => {
    const sure = await confirmAction(
      `Rotate the token of ${agent.name}?`,
      'The current token stops working at once and the agent is disconnected: restart it with the new token.',
      'Rotate token',
    );
    if (!sure) return;
    await attempt(status, async () => {
      const answer = await api('POST', `/api/admin/agents/${agent.id}/rotate-token`);
      put(once, shownOnce(`New token for ${agent.name}`, answer.token));
      notice(status, 'Token rotated: the old token is refused from now on.');
      once.scrollIntoView({ block: 'nearest' });
    });
  };

  const remove = async () => {
    const sure = await confirmAction(
      `Delete ${agent.name}?`,
      'Its token stops working at once and it is disconnected; deliveries still queued for it are withdrawn and never executed.',
      'Delete agent',
    );
    if (!sure) return;
    await attempt(status, async () => {
      await api('DELETE', `/api/admin/agents/${agent.id}`);
      reload();
    });
  };

  const refresh = async () => {
    if (!el.isConnected) return;
    try {
      Object.assign(agent, await api('GET', `/api/admin/agents/${agent.id}`));
      // Not while the operator is in the middle of something on this card.
      if (!el.contains(document.activeElement)) render();
    } catch {
      // Shown as it was; the next refresh tries again.
    }
  };

  render();
  return { el, refresh };
}

/** Balance, equity, open positions and pending orders, as the agent last published them. */
function stateView(state) {
  if (state === null || typeof state !== 'object') return h('p', { class: 'muted' }, 'No account state published yet.');
  const money = (v) => (typeof v === 'number' ? `${v.toFixed(2)}${state.currency ? ` ${state.currency}` : ''}` : '–');
  const positions = Array.isArray(state.positions) ? state.positions : [];
  const orders = Array.isArray(state.orders) ? state.orders : [];
  return h(
    'div',
    { class: 'state' },
    h(
      'dl',
      { class: 'figures' },
      h('div', null, h('dt', null, 'Balance'), h('dd', null, money(state.balance))),
      h('div', null, h('dt', null, 'Equity'), h('dd', null, money(state.equity))),
      state.updatedAt ? h('div', null, h('dt', null, 'As of'), h('dd', null, when(state.updatedAt))) : null,
    ),
    table(
      `Open positions (${positions.length})`,
      ['#', 'Symbol', 'Side', 'Volume', 'Price', 'Stop', 'Comment'],
      positions.map((p) => [p.position, p.symbol, p.side, p.volume, p.price, stopCell(p), p.comment ?? '']),
    ),
    table(
      `Pending orders (${orders.length})`,
      ['#', 'Symbol', 'Side', 'Kind', 'Volume', 'Price', 'Stop', 'Comment'],
      orders.map((o) => [
        o.order,
        o.symbol,
        o.side,
        o.kind,
        typeof o.filled === 'number' ? `${o.volume} (${o.filled} filled)` : o.volume,
        o.price,
        o.sl ?? '–',
        o.comment ?? '',
      ]),
    ),
    notManagedView(state.notManaged),
  );
}

/** The stop, and a red badge when the venue holds none for the position (its reason on hover and in the text). */
function stopCell(p) {
  const u = p.unprotected;
  if (u === null || typeof u !== 'object') return p.sl ?? '–';
  return h(
    'span',
    null,
    `${p.sl ?? '–'} `,
    h(
      'span',
      { class: 'badge bad', title: `${u.reason} (since ${u.since})` },
      `unprotected${u.attempts > 0 ? `, ${u.attempts} refusal${u.attempts === 1 ? '' : 's'}` : ''}`,
    ),
    h('br'),
    h('small', { class: 'muted' }, u.reason),
  );
}

/** What the venue holds that the agent does not manage: only shown when there is some. */
function notManagedView(list) {
  if (!Array.isArray(list) || list.length === 0) return null;
  return h(
    'div',
    { class: 'not-managed' },
    h(
      'p',
      null,
      h('span', { class: 'badge bad' }, `not managed (${list.length})`),
      ' The venue holds these and the agent does not manage them: see to them at the venue.',
    ),
    table(
      `Not managed (${list.length})`,
      ['Kind', 'Venue id', 'Symbol', 'Side', 'Volume', 'Price', 'Why'],
      list.map((n) => [n.kind, n.id, n.symbol, n.side, n.volume, n.price ?? '–', n.reason]),
    ),
  );
}

function table(caption, heads, rows) {
  if (rows.length === 0) return h('p', { class: 'muted' }, `${caption}: none.`);
  return h(
    'div',
    { class: 'scroll' },
    h(
      'table',
      null,
      h('caption', null, caption),
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          heads.map((x) => h('th', { scope: 'col' }, x)),
        ),
      ),
      h(
        'tbody',
        null,
        rows.map((r) =>
          h(
            'tr',
            null,
            r.map((c) => h('td', null, c instanceof Node ? c : String(c))),
          ),
        ),
      ),
    ),
  );
}

function createForm(accounts, once, reload) {
  const account = h(
    'select',
    { required: true },
    accounts.map((a) => h('option', { value: a.id }, `${a.name} (${a.id})`)),
  );
  const name = h('input', { type: 'text', required: true, maxlength: '200', value: 'paper' });
  const status = h('div');
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'new-agent' },
    h('h2', { id: 'new-agent' }, 'New agent'),
    accounts.length === 0 ? h('p', { class: 'muted' }, 'Create an account first.') : null,
    field('Account', account),
    field('Name', name),
    status,
    h('button', { type: 'submit', disabled: accounts.length === 0 }, 'Create agent'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    attempt(status, async () => {
      const agent = await api('POST', `/api/admin/accounts/${account.value}/agents`, { name: name.value });
      put(once, shownOnce(`Token for ${agent.name}`, agent.token));
      await reload();
      notice(
        status,
        `Created ${agent.name} (${agent.id}). Start it with: node dist/cli/main.js agent --server <this server's URL> --token <the token> --paper`,
      );
      once.scrollIntoView({ block: 'nearest' });
    });
  });
  return form;
}
