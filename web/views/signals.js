import { api, listAll } from '../api.js';
import { field, h, put, when } from '../dom.js';
import { filterForm } from '../filter-form.js';
import { attempt, problemList } from '../ui.js';

const OUTCOMES = ['executed', 'rejected', 'failed', 'expired', 'halted', 'queued', 'delivered'];

export function signalsView(body) {
  const source = h('select', { name: 'sourceId' }, h('option', { value: '' }, 'All sources'));
  const status = h(
    'select',
    { name: 'status' },
    h('option', { value: '' }, 'Any status'),
    h('option', { value: 'accepted' }, 'accepted'),
    h('option', { value: 'rejected' }, 'rejected'),
    h('option', { value: 'duplicate' }, 'duplicate'),
  );
  const outcome = h(
    'select',
    { name: 'outcome' },
    h('option', { value: '' }, 'Any outcome'),
    OUTCOMES.map((o) => h('option', { value: o }, o)),
  );
  const outcomeField = field('Outcome', outcome);
  outcomeField.hidden = true;
  const symbol = h('input', {
    type: 'search',
    name: 'symbol',
    maxlength: '40',
    spellcheck: 'false',
    autocapitalize: 'characters',
  });
  const live = h('span', { class: 'live', role: 'status', 'aria-live': 'polite' }, 'connecting…');
  const problems = h('div');
  const list = h('ol', { class: 'log', 'aria-label': 'Signals, newest first' });
  const older = h('div');
  // `#signals/<id>` (a trade's link): that signal, opened, above the live log.
  const linked = h('section', { class: 'linked', 'aria-label': 'Linked signal' });
  const sourceNames = new Map();
  let stream = null;

  const filters = filterForm({
    controls: [source, status, outcome, symbol],
    apply: () => connect(),
    children: [field('Source', source), field('Status', status), outcomeField, field('Symbol', symbol), live],
  });

  const rows = new Map();
  const upsert = (signal, atTop) => {
    const existing = rows.get(signal.id);
    const row = signalRow(signal, sourceNames);
    rows.set(signal.id, row);
    if (existing) existing.el.replaceWith(row.el);
    else if (atTop) list.prepend(row.el);
    else list.append(row.el);
    // A live update replaces the row: one the user had open stays open, its entry read anew.
    if (existing?.isOpen()) row.open();
  };

  const showOlderButton = (next) =>
    put(
      older,
      next
        ? h('button', { type: 'button', class: 'secondary', onclick: () => loadOlder(next) }, 'Older signals')
        : null,
    );

  const loadOlder = async (before) => {
    const q = filters.query();
    q.set('limit', '50');
    q.set('before', before);
    const page = await attempt(problems, () => api('GET', `/api/admin/signals?${q}`));
    if (!page) return;
    for (const s of page.signals) upsert(s, false);
    showOlderButton(page.next);
  };

  const connect = () => {
    stream?.close();
    put(problems);
    const q = filters.query();
    q.set('limit', '50');
    stream = new EventSource(`/api/admin/signals/stream?${q}`);
    stream.addEventListener('open', () => put(live, h('span', { class: 'dot' }), ' live'));
    stream.addEventListener('error', () => {
      put(live, 'reconnecting…');
      // A refused filter answers with a problem, not a stream: show why, stop retrying.
      if (stream.readyState === EventSource.CLOSED) explainRefusal();
    });
    stream.addEventListener('page', (e) => {
      const signals = JSON.parse(e.data);
      // Servers whose log carries per-agent outcome counts filter by them too.
      if (signals.some((s) => Object.hasOwn(s, 'outcome'))) outcomeField.hidden = false;
      rows.clear();
      put(list);
      if (signals.length === 0) list.append(h('li', { class: 'empty' }, 'No signals match.'));
      for (const s of signals) upsert(s, false);
      showOlderButton(signals.length === 50 ? signals[49].id : null);
    });
    stream.addEventListener('signal', (e) => {
      list.querySelector('.empty')?.remove();
      upsert(JSON.parse(e.data), true);
    });
    stream.addEventListener('problem', (e) => {
      put(problems, problemList({ problems: JSON.parse(e.data) }));
      stream.close();
    });
  };

  const explainRefusal = () => {
    const q = filters.query();
    attempt(problems, () => api('GET', `/api/admin/signals?${q}&limit=1`));
  };

  put(body, filters.form, problems, linked, list, older);
  const linkedId = decodeURIComponent(location.hash.split('/')[1] ?? '');
  if (linkedId)
    attempt(linked, async () => {
      const row = signalRow(await api('GET', `/api/admin/signals/${encodeURIComponent(linkedId)}`), sourceNames);
      put(linked, h('h2', null, 'Linked signal'), h('ol', { class: 'log' }, row.el));
      row.open();
    });
  listAll('/api/admin/sources', 'sources')
    .then((sources) => {
      for (const s of sources) {
        sourceNames.set(s.id, s.name);
        source.append(h('option', { value: s.id }, `${s.name} (${s.id})`));
      }
    })
    .catch(() => undefined)
    .finally(connect);
  return () => stream?.close();
}

/** A compact line per signal; opening it reads the whole entry with its per-agent outcomes. */
function signalRow(signal, sourceNames) {
  const accepted = signal.status !== 'rejected';
  const what = signal.signal ? `${signal.signal.symbol} ${signal.signal.action}` : excerpt(signal.rawBody);
  const detail = h('div', { class: 'detail' }, 'Loading…');
  const summary = h(
    'summary',
    null,
    h('time', { datetime: signal.receivedAt }, when(signal.receivedAt)),
    h('span', { class: 'what mono' }, what),
    h(
      'span',
      { class: `badge ${accepted ? 'ok' : 'bad'}` },
      accepted ? `${signal.httpStatus} ${signal.status}` : `${signal.httpStatus} ${signal.code ?? 'rejected'}`,
    ),
    outcomeBadges(signal.outcome),
    h('span', { class: 'muted src' }, sourceNames.get(signal.sourceId) ?? signal.sourceId),
  );
  const el = h('details', { class: 'signal', 'data-signal': signal.id }, summary, detail);
  let loaded = false;
  const open = () => {
    el.open = true;
  };
  el.addEventListener('toggle', async () => {
    if (!el.open || loaded) return;
    loaded = true;
    try {
      put(detail, signalDetail(await api('GET', `/api/admin/signals/${signal.id}`)));
    } catch (error) {
      loaded = false;
      put(detail, problemList(error));
    }
  });
  return { el: h('li', null, el), open, isOpen: () => el.open };
}

function outcomeBadges(outcome) {
  if (!outcome || typeof outcome !== 'object') return null;
  const parts = Object.entries(outcome).filter(([, n]) => typeof n === 'number' && n > 0);
  if (parts.length === 0) return null;
  return h(
    'span',
    { class: 'outcome' },
    parts.map(([name, n]) => h('span', { class: `badge ${name}` }, `${n} ${name}`)),
  );
}

function signalDetail(record) {
  return h(
    'div',
    { class: 'grid2' },
    h(
      'section',
      null,
      h('h3', null, 'Raw body'),
      h('pre', { class: 'mono' }, record.rawBody),
      h('p', { class: 'muted' }, `${record.contentType ?? 'no Content-Type'} · ${record.id}`),
    ),
    record.signal
      ? h(
          'section',
          null,
          h('h3', null, 'Normalized'),
          h('pre', { class: 'mono' }, JSON.stringify(record.signal, null, 2)),
        )
      : h(
          'section',
          null,
          h('h3', null, 'Why it was refused'),
          problemList({
            problems: record.errors ?? [{ code: record.code, param: record.param ?? undefined, detail: record.detail }],
          }),
        ),
    record.signal
      ? h(
          'section',
          { class: 'wide' },
          h('h3', null, 'Per agent'),
          record.deliveries.length === 0
            ? h('p', { class: 'muted' }, 'No agent was routed.')
            : h(
                'div',
                { class: 'scroll' },
                h(
                  'table',
                  null,
                  h(
                    'thead',
                    null,
                    h(
                      'tr',
                      null,
                      ['Agent', 'Outcome', 'Message', 'Attempts', 'Alert → order', 'Alert → fill', 'Acknowledged'].map(
                        (x) => h('th', { scope: 'col' }, x),
                      ),
                    ),
                  ),
                  h(
                    'tbody',
                    null,
                    record.deliveries.map((d) =>
                      h(
                        'tr',
                        null,
                        h('td', { class: 'mono' }, d.agentId),
                        h(
                          'td',
                          null,
                          h('span', { class: `badge ${d.status}` }, d.status),
                          d.ackedAfterExpiry ? ' (after expiry)' : '',
                        ),
                        h('td', null, d.message ?? ''),
                        h('td', null, String(d.attempts)),
                        h('td', { title: timingsTitle(record, d) }, sinceAlert(record, d.timings?.sentAt)),
                        h('td', { title: timingsTitle(record, d) }, sinceAlert(record, d.timings?.filledAt)),
                        h('td', null, d.ackedAt ? when(d.ackedAt) : '–'),
                      ),
                    ),
                  ),
                ),
              ),
        )
      : null,
  );
}

/** Milliseconds from the server receiving the alert to `time` (the agent's clock); – when the agent gave none. */
function sinceAlert(record, time) {
  if (!time) return '–';
  return `${Date.parse(time) - Date.parse(record.receivedAt)} ms`;
}

function timingsTitle(record, d) {
  const steps = [
    ['handed to the agent', d.deliveredAt],
    ['decided', d.timings?.decidedAt],
    ['order sent', d.timings?.sentAt],
    ['venue answered', d.timings?.venueAckedAt],
    ['filled', d.timings?.filledAt],
    ['acknowledged', d.ackedAt],
  ];
  return steps
    .filter(([, time]) => time)
    .map(([name, time]) => `${name}: +${Date.parse(time) - Date.parse(record.receivedAt)} ms`)
    .join('\n');
}

function excerpt(text) {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 40 ? `${line.slice(0, 40)}…` : line || '(empty body)';
}
