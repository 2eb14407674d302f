// Pieces every view uses: notices, problems, confirmations, copying.
import { h, put } from './dom.js';

/** Shows the problems of a failed call (each with its code, parameter and what to do). */
export function problemList(error) {
  const problems = error.problems ?? [{ code: 'ERROR', detail: String(error.message ?? error) }];
  return h(
    'ul',
    { class: 'problems', role: 'alert' },
    problems.map((p) =>
      h(
        'li',
        null,
        h('code', null, p.code),
        p.param ? h('span', { class: 'param' }, ` ${p.param}`) : null,
        `: ${p.detail}`,
      ),
    ),
  );
}

/** A line that says what just happened, read out by screen readers. */
export function notice(el, text, kind = 'ok') {
  put(el, h('p', { class: `notice ${kind}`, role: 'status' }, text));
}

/** Runs `work`, showing its problems in `where` (cleared first). Answers its result or undefined. */
export async function attempt(where, work) {
  put(where);
  try {
    return await work();
  } catch (error) {
    put(where, problemList(error));
    return undefined;
  }
}

/** A modal confirmation (a native <dialog>: focus stays inside, Escape cancels). */
export function confirmAction(question, detail, confirmLabel) {
  return new Promise((resolve) => {
    const dialog = h(
      'dialog',
      { class: 'confirm', 'aria-labelledby': 'confirm-title' },
      h('h2', { id: 'confirm-title' }, question),
      detail ? h('p', null, detail) : null,
      h(
        'div',
        { class: 'row end' },
        h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close('cancel') }, 'Cancel'),
        h('button', { type: 'button', class: 'danger', onclick: () => dialog.close('ok') }, confirmLabel),
      ),
    );
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(dialog.returnValue === 'ok');
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

/** Copies `text`; where the clipboard is not available (plain HTTP off localhost) selects it instead. */
export async function copyText(text, input, status) {
  try {
    await navigator.clipboard.writeText(text);
    notice(status, 'Copied.');
  } catch {
    input?.focus();
    input?.select();
    notice(status, 'Selected: press Ctrl+C (⌘C) to copy.', 'warn');
  }
}

/** A read-only value with a Copy button beside it. */
export function copyField(label, value, opts = {}) {
  const status = h('span', { class: 'copy-status', 'aria-live': 'polite' });
  const id = opts.id ?? `copy-${Math.random().toString(36).slice(2)}`;
  const control = opts.multiline
    ? h('textarea', { id, readonly: true, rows: opts.rows ?? 2, class: 'mono', value })
    : h('input', { id, readonly: true, class: 'mono', value, spellcheck: 'false' });
  return h(
    'div',
    { class: 'field copy' },
    h('label', { for: id }, label),
    h(
      'div',
      { class: 'row' },
      control,
      h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          'aria-label': `Copy ${label}`,
          onclick: () => copyText(value, control, status),
        },
        'Copy',
      ),
    ),
    status,
  );
}

/** A secret shown once (a new agent token): it is in the page until the operator closes it. */
export function shownOnce(title, value, onClose, label = 'Token') {
  const box = h(
    'section',
    { class: 'once', role: 'region', 'aria-label': title },
    h('h3', null, title),
    h('p', null, 'Shown this once: copy it now. signalgate keeps only its digest and cannot show it again.'),
    copyField(label, value, { id: 'shown-token' }),
    h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        onclick: () => {
          box.remove();
          onClose?.();
        },
      },
      'I have copied it',
    ),
  );
  return box;
}
