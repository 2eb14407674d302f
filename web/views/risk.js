// Risk: an account's rules and its sources', the kill switch (halt and release, each confirmed),
// and the audit log of every change (docs/risk.md).
import { api, listAll } from '../api.js';
import { field, h, put, when } from '../dom.js';
import { attempt, confirmAction } from '../ui.js';

export function riskView(body) {
  const accountSelect = h('select', { name: 'account' });
  const problems = h('div');
  const slot = h('div');
  put(body, h('div', { class: 'row filters' }, field('Account', accountSelect)), problems, slot);
  attempt(problems, async () => {
    const accounts = await listAll('/api/admin/accounts', 'accounts');
    if (accounts.length === 0) {
      put(slot, h('p', { class: 'empty' }, 'No accounts yet.'));
      return;
    }
    for (const a of accounts) accountSelect.append(h('option', { value: a.id }, `${a.name} (${a.id})`));
    const show = () => accountRisk(slot, accountSelect.value);
    accountSelect.addEventListener('change', show);
    show();
  });
}

function accountRisk(slot, accountId) {
  const haltCard = h('section', { class: 'card', 'aria-labelledby': 'risk-halt' });
  const rulesCard = h('section', { class: 'card', 'aria-labelledby': 'risk-rules' });
  const auditCard = h('section', { class: 'card', 'aria-labelledby': 'risk-audit' });
  put(slot, haltCard, rulesCard, auditCard);
  const reload = () => Promise.all([loadHalts(), loadRules(), loadAudit()]);
  const enc = encodeURIComponent(accountId);

  const loadHalts = async () => {
    const status = h('div');
    const { halts } = await api('GET', `/api/admin/halts?accountId=${enc}`);
    const own = halts.find((halt) => halt.scope === 'account');
    const reason = h('input', { type: 'text', maxlength: '500', required: true, name: 'reason' });
    const flatten = h('input', { type: 'checkbox', name: 'flatten' });
    put(
      haltCard,
      h('h2', { id: 'risk-halt' }, 'Kill switch'),
      halts.length === 0
        ? h('p', { class: 'halt-state' }, 'Not halted: signals are delivered.')
        : h(
            'ul',
            { class: 'halt-state' },
            halts.map((halt) =>
              h(
                'li',
                null,
                h('strong', null, `Halted ${halt.scope} ${halt.targetId}`),
                ` since ${when(halt.haltedAt)} by ${halt.haltedBy}: ${halt.reason}`,
              ),
            ),
          ),
      own
        ? h(
            'button',
            {
              type: 'button',
              onclick: async () => {
                const sure = await confirmAction(
                  'Release the account?',
                  'Signals received from now on are delivered. What came while it was halted stays halted.',
                  'Release',
                );
                if (sure)
                  attempt(status, async () => {
                    await api('POST', `/api/admin/accounts/${enc}/release`);
                    await reload();
                  });
              },
            },
            'Release account',
          )
        : h(
            'form',
            {
              class: 'halt-form',
              onsubmit: async (e) => {
                e.preventDefault();
                const sure = await confirmAction(
                  'Halt the account?',
                  flatten.checked
                    ? 'Every signal is answered and logged as halted, never delivered; and every position of its agents is closed, every pending order cancelled.'
                    : 'Every signal is answered and logged as halted, never delivered, until you release it.',
                  'Halt',
                );
                if (sure)
                  attempt(status, async () => {
                    await api('POST', `/api/admin/accounts/${enc}/halt`, {
                      reason: reason.value,
                      ...(flatten.checked ? { flatten: true } : {}),
                    });
                    await reload();
                  });
              },
            },
            field('Reason', reason),
            h('label', { class: 'check' }, flatten, ' Also close every position and cancel every order (flatten)'),
            h('button', { type: 'submit', class: 'danger' }, 'Halt account'),
          ),
      status,
    );
  };

  const rulesEditor = (title, path, rules, effective) => {
    const text = h('textarea', {
      class: 'mono',
      rows: 8,
      spellcheck: 'false',
      value: rules ? JSON.stringify(rules, null, 2) : '{}',
    });
    const status = h('div');
    return h(
      'form',
      {
        class: 'rules-form',
        onsubmit: (e) => {
          e.preventDefault();
          attempt(status, async () => {
            let parsed;
            try {
              parsed = JSON.parse(text.value);
            } catch (error) {
              throw Object.assign(new Error('not JSON'), {
                problems: [{ code: 'INVALID_FIELD', detail: `the rules are not JSON: ${error.message}` }],
              });
            }
            await api('PUT', path, parsed);
            await reload();
          });
        },
      },
      field(title, text, 'JSON: maxLotsPerOrder, maxDailyLoss {percent}, tradingWindow {timeZone, days, from, until}…'),
      effective ? h('p', { class: 'muted mono' }, `In force: ${JSON.stringify(effective)}`) : null,
      h('button', { type: 'submit', class: 'secondary' }, 'Save rules'),
      status,
    );
  };

  const loadRules = async () => {
    const [view, sources] = await Promise.all([
      api('GET', `/api/admin/accounts/${enc}/risk-rules`),
      listAll(`/api/admin/sources?accountId=${enc}`, 'sources'),
    ]);
    const bySource = new Map(view.sources.map((s) => [s.sourceId, s]));
    put(
      rulesCard,
      h('h2', { id: 'risk-rules' }, 'Rules'),
      rulesEditor('Account rules', `/api/admin/accounts/${enc}/risk-rules`, view.rules, view.effective),
      sources.map((source) =>
        rulesEditor(
          `Source ${source.name} (only tightens the account's)`,
          `/api/admin/sources/${encodeURIComponent(source.id)}/risk-rules`,
          bySource.get(source.id)?.rules ?? null,
          bySource.get(source.id)?.effective ?? null,
        ),
      ),
    );
  };

  const loadAudit = async () => {
    const { entries } = await api('GET', `/api/admin/risk-audit?accountId=${enc}&limit=50`);
    put(
      auditCard,
      h('h2', { id: 'risk-audit' }, 'Audit log'),
      entries.length === 0
        ? h('p', { class: 'empty' }, 'No changes yet.')
        : h(
            'table',
            { class: 'audit' },
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                ['When', 'Who', 'What', 'Of', 'Before', 'After'].map((t) => h('th', null, t)),
              ),
            ),
            h(
              'tbody',
              null,
              entries.map((e) =>
                h(
                  'tr',
                  null,
                  h('td', null, when(e.at)),
                  h('td', null, e.actor),
                  h('td', null, e.action),
                  h('td', { class: 'mono' }, `${e.scope} ${e.targetId}`),
                  h('td', { class: 'mono' }, e.before === null ? '—' : JSON.stringify(e.before)),
                  h('td', { class: 'mono' }, e.after === null ? '—' : JSON.stringify(e.after)),
                ),
              ),
            ),
          ),
    );
  };

  const status = h('div');
  slot.append(status);
  attempt(status, reload);
}
