import { api } from '../api.js';
import { dailyChart } from '../chart.js';
import { field, h, put, when } from '../dom.js';
import { attempt, notice } from '../ui.js';

export function accountsView(body) {
  const list = h('div', { class: 'cards' });
  const more = h('div');
  const problems = h('div');
  let next = null;

  const load = async (reset) => {
    if (reset) {
      put(list);
      next = null;
    }
    const page = await attempt(problems, () =>
      api('GET', `/api/admin/accounts?limit=20${next ? `&before=${encodeURIComponent(next)}` : ''}`),
    );
    if (!page) return;
    for (const account of page.accounts) list.append(accountCard(account));
    if (reset && page.accounts.length === 0)
      list.append(h('p', { class: 'empty' }, 'No accounts yet: create one below.'));
    next = page.next;
    put(
      more,
      next ? h('button', { type: 'button', class: 'secondary', onclick: () => load(false) }, 'More accounts') : null,
    );
  };

  put(
    body,
    problems,
    list,
    more,
    createForm(() => load(true)),
  );
  load(true);
}

function accountCard(account) {
  const usage = h('div', { class: 'usage' }, 'Loading usage…');
  const chart = h('div');
  const status = h('div');
  const quota = h('input', {
    type: 'number',
    min: '0',
    step: '1',
    value: String(account.monthlySignalQuota),
    inputmode: 'numeric',
  });
  const card = h(
    'article',
    { class: 'card', 'aria-labelledby': `acc-${account.id}` },
    h('h2', { id: `acc-${account.id}` }, account.name),
    h('p', { class: 'muted mono' }, account.id, ' · created ', when(account.createdAt)),
    usage,
    chart,
    h(
      'form',
      {
        class: 'row inline',
        onsubmit: (e) => {
          e.preventDefault();
          saveQuota();
        },
      },
      field('Monthly signal quota', quota),
      h('button', { type: 'submit', class: 'secondary' }, 'Save quota'),
    ),
    status,
  );
  const loadUsage = async () => {
    const [month, daily] = await Promise.all([
      api('GET', `/api/admin/accounts/${account.id}/usage`).catch(() => null),
      api('GET', `/api/admin/accounts/${account.id}/usage/daily?days=30`).catch(() => null),
    ]);
    if (month) {
      const pct = month.limit === 0 ? 100 : Math.min(100, Math.round((month.used / month.limit) * 100));
      const meterId = `meter-${account.id}`;
      put(
        usage,
        h('label', { for: meterId }, `Usage ${month.period}: ${month.used} of ${month.limit} signals (${pct} %)`),
        h('meter', {
          id: meterId,
          min: '0',
          max: String(Math.max(month.limit, 1)),
          value: String(month.used),
          high: String(Math.max(month.limit, 1) * 0.9),
          optimum: '0',
        }),
        h('small', { class: 'muted' }, `resets ${when(month.resetsAt)}`),
      );
    } else put(usage, 'Usage unavailable.');
    if (daily) put(chart, dailyChart(daily.days, 'Signals per day, last 30 days (UTC)'));
  };
  const saveQuota = () =>
    attempt(status, async () => {
      const updated = await api('PATCH', `/api/admin/accounts/${account.id}`, {
        monthlySignalQuota: Number(quota.value),
      });
      account.monthlySignalQuota = updated.monthlySignalQuota;
      notice(status, `Quota set to ${updated.monthlySignalQuota}.`);
      loadUsage();
    });
  loadUsage();
  return card;
}

function createForm(reload) {
  const name = h('input', { type: 'text', required: true, maxlength: '200' });
  const quota = h('input', {
    type: 'number',
    min: '0',
    step: '1',
    required: true,
    value: '1000',
    inputmode: 'numeric',
  });
  const status = h('div');
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'new-account' },
    h('h2', { id: 'new-account' }, 'New account'),
    field('Name', name),
    field('Monthly signal quota', quota),
    status,
    h('button', { type: 'submit' }, 'Create account'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    attempt(status, async () => {
      const account = await api('POST', '/api/admin/accounts', {
        name: name.value,
        monthlySignalQuota: Number(quota.value),
      });
      form.reset();
      await reload();
      notice(status, `Created ${account.name} (${account.id}).`);
    });
  });
  return form;
}
