import { api, listAll } from '../api.js';
import { field, h, put, when } from '../dom.js';
import { attempt, confirmAction, copyField, notice, shownOnce } from '../ui.js';

/**
 * A ready alert message for TradingView strategies: {{strategy.market_position}} becomes long,
 * short or flat, so the action is positionlong, positionshort or positionflat, the position the
 * strategy holds after its order (an exit or a reversal included). The opening parameters apply
 * only when a position is opened.
 */
export function tradingViewMessage() {
  return '{{ticker}},position{{strategy.market_position}},vol_pctbal_loss=1,sl_pips=20,tp_pips=40';
}

export function sourcesView(body) {
  const list = h('div', { class: 'cards' });
  const more = h('div');
  const problems = h('div');
  const accountFilter = h('select', { name: 'account' }, h('option', { value: '' }, 'All accounts'));
  let next = null;
  let accounts = [];
  const agentsByAccount = new Map();

  const agentsOf = async (accountId) => {
    if (!agentsByAccount.has(accountId))
      agentsByAccount.set(
        accountId,
        await listAll(`/api/admin/agents?accountId=${encodeURIComponent(accountId)}`, 'agents'),
      );
    return agentsByAccount.get(accountId);
  };

  const load = async (reset) => {
    if (reset) {
      put(list);
      next = null;
    }
    const account = accountFilter.value ? `&accountId=${encodeURIComponent(accountFilter.value)}` : '';
    const page = await attempt(problems, () =>
      api('GET', `/api/admin/sources?limit=20${account}${next ? `&before=${encodeURIComponent(next)}` : ''}`),
    );
    if (!page) return;
    for (const source of page.sources) list.append(sourceCard(source, agentsOf, () => load(true)));
    if (reset && page.sources.length === 0)
      list.append(h('p', { class: 'empty' }, 'No sources yet: create one below.'));
    next = page.next;
    put(
      more,
      next ? h('button', { type: 'button', class: 'secondary', onclick: () => load(false) }, 'More sources') : null,
    );
  };
  accountFilter.addEventListener('change', () => load(true));

  const createSlot = h('div');
  put(body, h('div', { class: 'row filters' }, field('Account', accountFilter)), problems, list, more, createSlot);
  attempt(problems, async () => {
    accounts = await listAll('/api/admin/accounts', 'accounts');
    for (const a of accounts) accountFilter.append(h('option', { value: a.id }, `${a.name} (${a.id})`));
    put(
      createSlot,
      createForm(accounts, agentsOf, () => load(true)),
    );
    await load(true);
  });
}

function sourceCard(source, agentsOf, reload) {
  const status = h('div', { class: 'card-status' });
  // The inbound URL of a rotated key, shown once: the server keeps only the key's digest.
  const once = h('div');
  const card = h('article', { class: 'card source', 'data-source': source.id, 'aria-labelledby': `src-${source.id}` });

  const render = () => {
    const badge = source.active
      ? h('span', { class: 'badge ok' }, 'active')
      : h('span', { class: 'badge off' }, 'inactive');
    const hmacBadge = source.hmac ? h('span', { class: 'badge' }, 'HMAC secret set') : null;
    const toggle = h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        onclick: () =>
          change(
            { active: !source.active },
            source.active ? 'Deactivated: its key is refused until activated again.' : 'Activated.',
          ),
      },
      source.active ? 'Deactivate' : 'Activate',
    );
    const rotate = h('button', { type: 'button', class: 'secondary', onclick: rotateKey }, 'Rotate key');
    const remove = h('button', { type: 'button', class: 'danger', onclick: removeSource }, 'Delete');
    put(
      card,
      h(
        'header',
        { class: 'row spread' },
        h('h2', { id: `src-${source.id}` }, source.name),
        h('span', null, badge, ' ', hmacBadge),
      ),
      h(
        'p',
        { class: 'muted mono' },
        source.id,
        ' · account ',
        source.accountId,
        ' · created ',
        when(source.createdAt),
      ),
      h(
        'p',
        { class: 'key-hint' },
        'Key ',
        h('span', { class: 'mono' }, `${source.authKeyHint}…`),
        ' · its inbound URL was shown once, when the source was made or given a new key. Lost it? Rotate the key.',
      ),
      once,
      copyField('TradingView alert message', tradingViewMessage(), { multiline: true, rows: 2 }),
      h(
        'p',
        { class: 'hint' },
        'In the TradingView alert, paste the inbound URL as the Webhook URL and this as the message (a strategy alert fills in buy or sell; check any edit in the Checker).',
        source.hmac
          ? ' This source has an HMAC secret: TradingView cannot sign its requests, so its alerts would be refused.'
          : '',
      ),
      h('div', { class: 'row wrap' }, toggle, rotate, remove),
      settings(),
      status,
    );
  };

  const change = (patch, done) =>
    attempt(status, async () => {
      Object.assign(source, await api('PATCH', `/api/admin/sources/${source.id}`, patch));
      render();
      notice(status, done);
    });

  const rotateKey = async () => {
    const sure = await confirmAction(
      `Rotate the key of ${source.name}?`,
      'The current inbound URL stops working at once: every sender (TradingView alerts too) must be given the new one.',
      'Rotate key',
    );
    if (!sure) return;
    await attempt(status, async () => {
      const { authKey: _key, inboundUrl, ...rotated } = await api('POST', `/api/admin/sources/${source.id}/rotate-key`);
      Object.assign(source, rotated);
      render();
      put(once, shownOnce(`New inbound URL for ${source.name}`, inboundUrl, undefined, 'Inbound URL'));
      notice(status, 'Key rotated: the old inbound URL is refused from now on. Copy the new one.');
    });
  };

  const removeSource = async () => {
    const sure = await confirmAction(
      `Delete ${source.name}?`,
      'Its key stops working at once, and its signal log and the deliveries of its signals are removed. Deactivate it instead to keep the log.',
      'Delete source',
    );
    if (!sure) return;
    await attempt(status, async () => {
      await api('DELETE', `/api/admin/sources/${source.id}`);
      reload();
    });
  };

  const settings = () => {
    const secret = h('input', {
      type: 'password',
      autocomplete: 'new-password',
      maxlength: '1024',
      spellcheck: 'false',
    });
    const maxAge = h('input', {
      type: 'number',
      min: '1',
      max: '86400',
      step: '1',
      value: String(source.maxSignalAgeSeconds),
      inputmode: 'numeric',
    });
    const routing = h(
      'fieldset',
      { class: 'routing' },
      h('legend', null, 'Routing: the agents that get its signals (none ticked: every agent of the account)'),
    );
    agentsOf(source.accountId)
      .then((agents) => {
        if (agents.length === 0) routing.append(h('p', { class: 'muted' }, 'The account has no agents yet.'));
        for (const agent of agents) {
          const id = `route-${source.id}-${agent.id}`;
          routing.append(
            h(
              'div',
              { class: 'check' },
              h('input', { type: 'checkbox', id, value: agent.id, checked: source.agentIds.includes(agent.id) }),
              h('label', { for: id }, `${agent.name} (${agent.id})`),
            ),
          );
        }
        routing.append(
          h(
            'button',
            {
              type: 'button',
              class: 'secondary',
              onclick: () => {
                const agentIds = [...routing.querySelectorAll('input:checked')].map((c) => c.value);
                change(
                  { agentIds },
                  agentIds.length === 0
                    ? 'Routes to every agent of the account.'
                    : `Routes to ${agentIds.length} agent(s).`,
                );
              },
            },
            'Save routing',
          ),
        );
      })
      .catch(() => routing.append(h('p', { class: 'muted' }, 'Agents could not be read.')));
    const ipsSupported = Object.hasOwn(source, 'allowedIps');
    const ips = ipsSupported
      ? h('input', { type: 'text', value: (source.allowedIps ?? []).join(', '), spellcheck: 'false' })
      : null;
    return h(
      'details',
      { class: 'settings' },
      h('summary', null, 'Settings'),
      h(
        'form',
        {
          class: 'row inline',
          onsubmit: (e) => {
            e.preventDefault();
            change({ hmacSecret: secret.value }, 'HMAC secret set: requests must now be signed.');
          },
        },
        field(
          'HMAC secret',
          secret,
          source.hmac ? 'A secret is set; type a new one to replace it.' : 'None set: requests need no signature.',
        ),
        h('button', { type: 'submit', class: 'secondary' }, 'Set secret'),
        source.hmac
          ? h(
              'button',
              {
                type: 'button',
                class: 'secondary',
                onclick: () => change({ hmacSecret: null }, 'HMAC secret cleared.'),
              },
              'Clear secret',
            )
          : null,
      ),
      h(
        'form',
        {
          class: 'row inline',
          onsubmit: (e) => {
            e.preventDefault();
            change(
              { maxSignalAgeSeconds: Number(maxAge.value) },
              `Signals now expire ${maxAge.value} s after they arrive.`,
            );
          },
        },
        field('Maximum age (seconds)', maxAge, 'A signal not handed to an agent by then expires unexecuted.'),
        h('button', { type: 'submit', class: 'secondary' }, 'Save maximum age'),
      ),
      ipsSupported
        ? h(
            'form',
            {
              class: 'row inline',
              onsubmit: (e) => {
                e.preventDefault();
                const list = ips.value.split(/[\s,]+/).filter(Boolean);
                change(
                  { allowedIps: list },
                  list.length === 0 ? 'Any address may send.' : `Only ${list.join(', ')} may send.`,
                );
              },
            },
            field('Allowed IPs', ips, 'Addresses or CIDR ranges, comma separated; empty: any address.'),
            h('button', { type: 'submit', class: 'secondary' }, 'Save allowed IPs'),
          )
        : null,
      routing,
    );
  };

  render();
  return card;
}

function createForm(accounts, agentsOf, reload) {
  const account = h(
    'select',
    { required: true },
    accounts.map((a) => h('option', { value: a.id }, `${a.name} (${a.id})`)),
  );
  const name = h('input', { type: 'text', required: true, maxlength: '200', value: 'TradingView' });
  const maxAge = h('input', { type: 'number', min: '1', max: '86400', step: '1', value: '120', inputmode: 'numeric' });
  const status = h('div');
  const created = h('div');
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'new-source' },
    h('h2', { id: 'new-source' }, 'New source'),
    accounts.length === 0 ? h('p', { class: 'muted' }, 'Create an account first.') : null,
    field('Account', account),
    field('Name', name),
    field('Maximum age (seconds)', maxAge),
    status,
    h('button', { type: 'submit', disabled: accounts.length === 0 }, 'Create source'),
    created,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    attempt(status, async () => {
      const source = await api('POST', '/api/admin/sources', {
        accountId: account.value,
        name: name.value,
        maxSignalAgeSeconds: Number(maxAge.value),
      });
      await reload();
      put(created, shownOnce(`Inbound URL for ${source.name}`, source.inboundUrl, undefined, 'Inbound URL'));
      notice(status, `Created ${source.name}: copy its inbound URL now, it is not shown again.`);
      void agentsOf;
    });
  });
  return form;
}
