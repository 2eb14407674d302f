import { api, listAll } from '../api.js';
import { ago, field, h, put, when } from '../dom.js';
import { attempt, confirmAction, notice } from '../ui.js';

const REFRESH_MS = 5_000;

/** Per kind: the fields the form asks for (label, API name, input type); secrets are never shown again. */
const KINDS = {
  webhook: [
    ['URL', 'url', 'url'],
    ['Signing secret (optional)', 'signingSecret', 'password'],
  ],
  telegram: [
    ['Bot token', 'botToken', 'password'],
    ['Chat id', 'chatId', 'text'],
  ],
  discord: [['Webhook URL', 'url', 'url']],
  slack: [['Webhook URL', 'url', 'url']],
  email: [
    ['SMTP host', 'host', 'text'],
    ['SMTP port (optional)', 'port', 'number'],
    ['Security', 'security', 'select'],
    ['SMTP user', 'username', 'text'],
    ['SMTP password', 'password', 'password'],
    ['From', 'from', 'email'],
    ['To (addresses, comma-separated)', 'to', 'text'],
  ],
};

/** Notification channels (docs/notifications.md): each with its sending state and its latest messages. */
export function notificationsView(body) {
  const list = h('div', { class: 'cards' });
  const problems = h('div');
  const accountFilter = h('select', { name: 'account' }, h('option', { value: '' }, 'All accounts'));
  const cards = new Map();

  const load = async () => {
    const account = accountFilter.value ? `?accountId=${encodeURIComponent(accountFilter.value)}` : '';
    const answer = await attempt(problems, () => api('GET', `/api/admin/channels${account}`));
    if (!answer) return;
    put(list);
    cards.clear();
    for (const channel of answer.channels) {
      const card = channelCard(channel, load);
      cards.set(channel.id, card);
      list.append(card.el);
    }
    if (answer.channels.length === 0) list.append(h('p', { class: 'empty' }, 'No channels yet: add one below.'));
  };
  accountFilter.addEventListener('change', load);

  const createSlot = h('div');
  put(body, h('div', { class: 'row filters' }, field('Account', accountFilter)), problems, list, createSlot);
  attempt(problems, async () => {
    const accounts = await listAll('/api/admin/accounts', 'accounts');
    for (const a of accounts) accountFilter.append(h('option', { value: a.id }, `${a.name} (${a.id})`));
    put(createSlot, createForm(accounts, load));
    await load();
  });

  // Sending goes on while the page is open: each card's state and messages are read again.
  const timer = setInterval(() => {
    for (const card of cards.values()) card.refresh();
  }, REFRESH_MS);
  return () => clearInterval(timer);
}

function channelCard(channel, reload) {
  const headingId = `nch-${channel.id}`;
  const state = h('div');
  const messages = h('div');
  const status = h('div');
  const showState = (c) => {
    const s = c.state;
    put(
      state,
      s.failures === 0
        ? h(
            'p',
            null,
            c.enabled ? 'Working' : 'Disabled',
            ' · last sent ',
            ago(s.lastSentAt),
            ` · ${s.pending} waiting`,
          )
        : h(
            'p',
            { class: 'notice warn' },
            `Failing since ${when(s.failingSince)} (${s.failures} in a row): ${s.lastError ?? ''}`,
            s.retryAt ? ` · next try ${when(s.retryAt)}` : '',
            ` · ${s.pending} waiting`,
          ),
    );
  };
  const showMessages = (list) =>
    put(
      messages,
      list.length === 0
        ? h('p', { class: 'muted' }, 'Recent messages: none.')
        : h(
            'div',
            { class: 'scroll' },
            h(
              'table',
              null,
              h('caption', null, `Recent messages (${list.length})`),
              h(
                'thead',
                null,
                h(
                  'tr',
                  null,
                  ['Event', 'Status', 'Attempts', 'Last error', 'Times', 'Last at'].map((x) =>
                    h('th', { scope: 'col' }, x),
                  ),
                ),
              ),
              h(
                'tbody',
                null,
                list.map((m) =>
                  h(
                    'tr',
                    null,
                    [m.event, m.state, m.attempts, m.lastError ?? '–', m.count, when(m.lastAt)].map((c) =>
                      h('td', null, String(c)),
                    ),
                  ),
                ),
              ),
            ),
          ),
    );
  const refresh = async () => {
    const [fresh, recent] = await Promise.all([
      api('GET', `/api/admin/channels/${channel.id}`).catch(() => null),
      api('GET', `/api/admin/channels/${channel.id}/messages`).catch(() => null),
    ]);
    if (fresh) showState(fresh);
    if (recent) showMessages(recent.messages);
  };
  const sendTest = () =>
    attempt(status, async () => {
      const answer = await api('POST', `/api/admin/channels/${channel.id}/test`);
      if (answer.sent) notice(status, `Test sent through ${channel.name}.`);
      else notice(status, `Test not sent: ${answer.error}`, 'warn');
    });
  const remove = async () => {
    const sure = await confirmAction(
      `Remove ${channel.name}?`,
      'Its waiting messages are dropped; nothing more is sent through it.',
      'Remove channel',
    );
    if (!sure) return;
    await attempt(status, async () => {
      await api('DELETE', `/api/admin/channels/${channel.id}`);
      await reload();
    });
  };
  const settings = Object.entries(channel.settings).map(([k, v]) => `${k}: ${v}`);
  const el = h(
    'article',
    { class: 'card', 'aria-labelledby': headingId },
    h('h2', { id: headingId }, channel.name),
    h(
      'p',
      { class: 'muted mono' },
      `${channel.kind} · ${channel.id} · account ${channel.accountId}`,
      settings.length > 0 ? ` · ${settings.join(', ')}` : '',
      channel.secretsSet.length > 0 ? ` · secrets kept: ${channel.secretsSet.join(', ')}` : '',
    ),
    h('p', { class: 'muted' }, `Told of ${channel.events.length} events: ${channel.events.join(', ')}`),
    state,
    h(
      'div',
      { class: 'row' },
      h('button', { type: 'button', class: 'secondary', onclick: sendTest }, 'Send a test'),
      h('button', { type: 'button', class: 'danger', onclick: remove }, 'Remove'),
    ),
    status,
    messages,
  );
  showState(channel);
  refresh();
  return { el, refresh };
}

function createForm(accounts, reload) {
  const account = h(
    'select',
    { required: true },
    accounts.map((a) => h('option', { value: a.id }, `${a.name} (${a.id})`)),
  );
  const kind = h(
    'select',
    { required: true },
    Object.keys(KINDS).map((k) => h('option', { value: k }, k)),
  );
  const name = h('input', { type: 'text', required: true, maxlength: '200' });
  const inputs = {};
  const groups = {};
  for (const [k, fields] of Object.entries(KINDS)) {
    groups[k] = h(
      'div',
      { 'data-kind': k },
      fields.map(([label, key, type]) => {
        const control =
          type === 'select'
            ? h(
                'select',
                null,
                ['starttls', 'tls', 'none'].map((v) => h('option', { value: v }, v)),
              )
            : h('input', {
                type,
                autocomplete: type === 'password' ? 'new-password' : 'off',
                spellcheck: 'false',
              });
        inputs[`${k}.${key}`] = control;
        return field(label, control);
      }),
    );
  }
  const showKind = () => {
    for (const [k, group] of Object.entries(groups)) group.hidden = k !== kind.value;
  };
  kind.addEventListener('change', showKind);
  showKind();
  const status = h('div');
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'new-channel' },
    h('h2', { id: 'new-channel' }, 'New channel'),
    accounts.length === 0 ? h('p', { class: 'muted' }, 'Create an account first.') : null,
    field('Account', account),
    field('Kind', kind),
    field('Name', name),
    Object.values(groups),
    h(
      'p',
      { class: 'muted' },
      'Told of every event; choose fewer with the API or the CLI. Secrets are not shown again.',
    ),
    status,
    h('button', { type: 'submit', disabled: accounts.length === 0 }, 'Add channel'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    attempt(status, async () => {
      const body = { kind: kind.value, name: name.value };
      for (const [, key, type] of KINDS[kind.value]) {
        const value = inputs[`${kind.value}.${key}`].value.trim();
        if (value !== '') body[key] = type === 'number' ? Number(value) : value;
      }
      const channel = await api('POST', `/api/admin/accounts/${account.value}/channels`, body);
      form.reset();
      showKind();
      await reload();
      notice(status, `Added ${channel.name} (${channel.id}).`);
    });
  });
  return form;
}
