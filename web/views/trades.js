// Trades: the ledger's trades from the venue's fills, their statistics, the equity curve, and the
// path from alert to fill per source (docs/ledger.md). Each trade links to its signals in the log.
import { api, listAll } from '../api.js';
import { equityChart } from '../chart.js';
import { field, h, put, when } from '../dom.js';
import { filterForm } from '../filter-form.js';
import { attempt } from '../ui.js';

export function tradesView(body) {
  const account = h('select', { name: 'accountId' });
  const source = h('select', { name: 'sourceId' }, h('option', { value: '' }, 'All sources'));
  const text = (name) => h('input', { type: 'search', name, maxlength: '100', spellcheck: 'false' });
  const strategy = text('strategy');
  const symbol = text('symbol');
  const from = h('input', { type: 'date', name: 'from' });
  const until = h('input', { type: 'date', name: 'until' });
  const csv = h('a', { class: 'button secondary', download: 'trades.csv' }, 'Export CSV');
  const problems = h('div');
  const figures = h('section', { class: 'card', 'aria-labelledby': 'trades-figures' });
  const sources = h('section', { class: 'card', 'aria-labelledby': 'trades-sources' });
  const list = h('section', { class: 'card', 'aria-labelledby': 'trades-list' });
  const sourceNames = new Map();

  const filters = filterForm({
    controls: [source, strategy, symbol, from, until],
    apply: () => load(),
    children: [
      field('Account', account),
      field('Source', source),
      field('Strategy', strategy, "the signal's comment"),
      field('Symbol', symbol),
      field('From', from),
      field('Until', until, 'not included'),
      csv,
    ],
  });

  const load = async () => {
    const q = filters.query({ accountId: account.value });
    csv.href = `/api/admin/ledger/trades.csv?${q}`;
    const answer = await attempt(problems, () =>
      Promise.all([api('GET', `/api/admin/ledger/trades?${q}`), api('GET', `/api/admin/ledger/statistics?${q}`)]),
    );
    if (!answer) return;
    const [{ trades }, stats] = answer;
    showFigures(figures, stats.statistics);
    showSources(sources, stats, sourceNames);
    showTrades(list, trades, sourceNames);
  };

  const loadSources = async () => {
    put(source, h('option', { value: '' }, 'All sources'));
    const found = await listAll(`/api/admin/sources?accountId=${encodeURIComponent(account.value)}`, 'sources');
    for (const s of found) {
      sourceNames.set(s.id, s.name);
      source.append(h('option', { value: s.id }, `${s.name} (${s.id})`));
    }
  };

  // The account is no filter like the others: the sources offered are the account's own.
  account.addEventListener('change', () => attempt(problems, async () => (await loadSources(), load())));

  put(body, filters.form, problems, figures, sources, list);
  attempt(problems, async () => {
    const accounts = await listAll('/api/admin/accounts', 'accounts');
    if (accounts.length === 0) {
      put(list, h('p', { class: 'empty' }, 'No accounts yet.'));
      return;
    }
    for (const a of accounts) account.append(h('option', { value: a.id }, `${a.name} (${a.id})`));
    await loadSources();
    await load();
  });
}

/** Money and lots as the ledger keeps them (to 1e-8), without trailing zeros; – for none. */
function num(value, digits = 8) {
  return typeof value === 'number' ? value.toLocaleString('en-US', { maximumFractionDigits: digits }) : '–';
}

function percent(rate) {
  return typeof rate === 'number' ? `${(rate * 100).toFixed(1)} %` : '–';
}

function showFigures(card, s) {
  const dd = (label, value) => h('div', null, h('dt', null, label), h('dd', null, value));
  const dd2 = s.maxDrawdown;
  put(
    card,
    h('h2', { id: 'trades-figures' }, 'Statistics'),
    h(
      'dl',
      { class: 'figures' },
      dd('Net profit', num(s.netProfit)),
      dd('Trades', `${s.trades}${s.openTrades > 0 ? ` (+${s.openTrades} open)` : ''}`),
      dd('Win rate', percent(s.winRate)),
      dd('Average win', num(s.averageWin)),
      dd('Average loss', num(s.averageLoss)),
      dd('Profit factor', num(s.profitFactor, 2)),
      dd('Largest loss', num(s.largestLoss)),
      dd('Max drawdown', `${num(dd2.amount)}${dd2.percent === null ? '' : ` (${dd2.percent.toFixed(1)} %)`}`),
      dd('Fees', num(s.fees)),
      dd('Funding', num(s.funding)),
    ),
    s.equityCurve.length > 1
      ? equityChart(s.equityCurve, 'Equity curve (cumulative realized profit)')
      : h('p', { class: 'muted' }, 'The equity curve shows once a trade has closed in the period.'),
  );
}

/** Per source: what its trades earned (by exit) and what the path from alert to fill cost (by receipt). */
function showSources(card, stats, sourceNames) {
  const paths = new Map(stats.latencyBySource.map((p) => [p.key, p]));
  const keys = [...new Set([...stats.bySource.map((g) => g.key), ...paths.keys()])];
  const earned = new Map(stats.bySource.map((g) => [g.key, g.statistics]));
  const ms = (v) => (typeof v === 'number' ? `${v} ms` : '–');
  // Pips where the instrument is known; in price for a source trading one symbol otherwise.
  const slip = (p, which) => {
    if (!p) return '–';
    if (p.slippagePips.count > 0) return `${num(p.slippagePips[which], 2)} pips`;
    return p.slippage && p.slippage.count > 0 ? num(p.slippage[which]) : '–';
  };
  put(
    card,
    h('h2', { id: 'trades-sources' }, 'Per source'),
    keys.length === 0
      ? h('p', { class: 'empty' }, 'No trades in the period.')
      : h(
          'div',
          { class: 'scroll' },
          h(
            'table',
            { class: 'per-source' },
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                [
                  'Source',
                  'Net profit',
                  'Trades',
                  'Win rate',
                  'Latency median',
                  'Latency p95',
                  'Slippage median',
                  'Slippage p95',
                ].map((t) => h('th', { scope: 'col' }, t)),
              ),
            ),
            h(
              'tbody',
              null,
              keys.map((key) => {
                const s = earned.get(key);
                const p = paths.get(key);
                return h(
                  'tr',
                  null,
                  h('td', null, key === null ? 'no signal' : (sourceNames.get(key) ?? key)),
                  h('td', null, s ? num(s.netProfit) : '–'),
                  h('td', null, s ? String(s.trades) : '0'),
                  h('td', null, s ? percent(s.winRate) : '–'),
                  h('td', null, ms(p?.latencyMs.median)),
                  h('td', null, ms(p?.latencyMs.p95)),
                  h('td', null, slip(p, 'median')),
                  h('td', null, slip(p, 'p95')),
                );
              }),
            ),
          ),
        ),
  );
}

/** A link to a signal in the signal log, opened there. */
function signalLink(id, label) {
  return h('a', { href: `#signals/${encodeURIComponent(id)}`, class: 'mono', title: id }, label);
}

function showTrades(card, trades, sourceNames) {
  put(
    card,
    h('h2', { id: 'trades-list' }, `Trades (${trades.length})`),
    trades.length === 0
      ? h('p', { class: 'empty' }, 'No trades match: the agents report fills as their venues make them.')
      : h(
          'div',
          { class: 'scroll' },
          h(
            'table',
            { class: 'trades' },
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                [
                  'Opened',
                  'Symbol',
                  'Side',
                  'Lots',
                  'Entry',
                  'Closed',
                  'Exit',
                  'Fees',
                  'Funding',
                  'Profit',
                  'Source',
                  'Strategy',
                  'Signals',
                ].map((t) => h('th', { scope: 'col' }, t)),
              ),
            ),
            h(
              'tbody',
              null,
              [...trades].reverse().map((t) =>
                h(
                  'tr',
                  { 'data-trade': t.id },
                  h('td', null, h('time', { datetime: t.entryAt }, when(t.entryAt))),
                  h('td', { class: 'mono' }, t.symbol),
                  h('td', null, t.side),
                  h('td', null, num(t.lots)),
                  h('td', null, num(t.entryPrice, 10)),
                  h('td', null, t.exitAt ? h('time', { datetime: t.exitAt }, when(t.exitAt)) : 'open'),
                  h('td', null, num(t.exitPrice, 10)),
                  h('td', null, num(t.fees)),
                  h('td', null, num(t.funding)),
                  h('td', { class: profitClass(t.realizedProfit) }, num(t.realizedProfit)),
                  h('td', null, t.sourceId === null ? '–' : (sourceNames.get(t.sourceId) ?? t.sourceId)),
                  h('td', null, t.strategy ?? '–'),
                  h(
                    'td',
                    null,
                    t.openingSignalId ? signalLink(t.openingSignalId, 'opening') : null,
                    t.closingSignalIds.map((id) => [' ', signalLink(id, 'closing')]),
                  ),
                ),
              ),
            ),
          ),
        ),
  );
}

function profitClass(profit) {
  if (typeof profit !== 'number' || profit === 0) return null;
  return profit > 0 ? 'gain' : 'loss';
}
