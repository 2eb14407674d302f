import { api } from '../api.js';
import { field, h, put } from '../dom.js';
import { problemList } from '../ui.js';

/** Judges a signal as the inbound endpoint would, through the server: nothing is stored or sent. */
export function checkerView(body) {
  const input = h('textarea', {
    rows: '4',
    class: 'mono',
    spellcheck: 'false',
    placeholder: 'EURUSD,buy,vol_pctbal_loss=1,sl_pips=20,tp1_pips=20,tp2_pips=40',
  });
  const type = h(
    'select',
    null,
    h('option', { value: '' }, 'none (decided by the first character, as curl -d sends)'),
    h('option', { value: 'text/plain' }, 'text/plain'),
    h('option', { value: 'application/json' }, 'application/json'),
  );
  const result = h('div', { class: 'result', 'aria-live': 'polite' });
  const check = async () => {
    if (input.value.trim() === '') return put(result);
    try {
      const answer = await api('POST', '/api/admin/check', {
        body: input.value,
        ...(type.value && { contentType: type.value }),
      });
      const verdict = answer.valid
        ? [
            h('p', { class: 'notice ok' }, `Valid (${answer.format}): the inbound endpoint would accept it as`),
            h('pre', { class: 'mono' }, JSON.stringify(answer.signal, null, 2)),
          ]
        : [
            h('p', { class: 'notice bad' }, `Refused with ${answer.httpStatus} ${answer.code}:`),
            problemList({ problems: answer.errors }),
          ];
      put(result, ...(answer.template ? templateReading(answer.template) : []), ...verdict);
    } catch (error) {
      put(result, problemList(error));
    }
  };
  let typing = null;
  input.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(check, 300);
  });
  type.addEventListener('change', check);
  put(
    body,
    h(
      'p',
      null,
      'Type a signal line or JSON: it is judged exactly as the inbound endpoint would judge it, without being stored or sent.',
    ),
    h(
      'form',
      {
        class: 'card',
        onsubmit: (e) => {
          e.preventDefault();
          check();
        },
      },
      field('Signal', input),
      field('Content-Type', type),
      h('button', { type: 'submit' }, 'Check'),
    ),
    result,
  );
  input.focus();
}

/** A TradingView alert message: what each placeholder becomes, each message it can turn into, and the warnings. */
function templateReading(template) {
  return [
    h('p', null, 'A TradingView alert message: checked with sample values for its placeholders.'),
    h(
      'ul',
      { 'aria-label': 'Placeholders' },
      ...template.placeholders.map((p) =>
        h(
          'li',
          null,
          h('code', null, p.written),
          ` becomes ${p.becomes === null ? 'nothing known here (left as written)' : p.becomes}${p.note ? `: ${p.note}` : ''}`,
        ),
      ),
    ),
    h(
      'ul',
      { 'aria-label': 'Messages it can turn into' },
      ...template.checked.map((c) =>
        h('li', null, h('code', null, c.body), c.valid ? ' is valid' : ` is refused: ${c.code}`),
      ),
    ),
    ...template.warnings.map((warning) => h('p', { class: 'notice bad', role: 'alert' }, `Warning: ${warning}`)),
  ];
}
