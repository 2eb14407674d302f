// A page's filter form (trades, signals): the controls a query is made of, and when it is applied.
import { h } from './dom.js';

/** Typing in a search box applies the filter once it pauses this long, not at every key. */
const TYPING_PAUSE_MS = 400;

/**
 * `controls` (named selects, dates and search boxes) filter the page: a list or a date applies
 * at once, a search box once typing pauses, Enter at once. `children` are the form's content
 * (their fields, and whatever stands beside them). The query holds each control's value, trimmed,
 * by its name, where it has one, after `first`.
 */
export function filterForm({ controls, apply, children }) {
  let typing = null;
  for (const control of controls) {
    if (control.type === 'search')
      control.addEventListener('input', () => {
        clearTimeout(typing);
        typing = setTimeout(apply, TYPING_PAUSE_MS);
      });
    else control.addEventListener('change', apply);
  }
  const form = h(
    'form',
    {
      class: 'row filters wrap',
      role: 'search',
      onsubmit: (e) => {
        e.preventDefault();
        apply();
      },
    },
    children,
  );
  const query = (first) => {
    const q = new URLSearchParams(first);
    for (const control of controls) {
      const value = control.value.trim();
      if (value) q.set(control.name, value);
    }
    return q;
  };
  return { form, query };
}
