// Builds DOM nodes. Text always goes in as text nodes, never as HTML, so nothing a sender put in a
// signal can become markup.

/**
 * h('button', { class: 'x', onclick: fn, 'aria-label': 'y' }, 'text', otherNode)
 * Props: on* are listeners; `class`, `for`, aria-* and data-* are attributes; booleans toggle
 * attributes; `value`/`checked` are set as properties.
 */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'value' || name === 'checked') el[name] = value;
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces everything inside `el`. */
export function put(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

let ids = 0;
/** A unique id, to tie a label to its control. */
export function uid(prefix) {
  ids += 1;
  return `${prefix}-${ids}`;
}

/** A labelled control: `field('Name', h('input', {...}))`. */
export function field(label, control, hint) {
  const id = control.id || uid('f');
  control.id = id;
  const hintNode = hint ? h('small', { class: 'hint', id: `${id}-hint` }, hint) : null;
  if (hintNode) control.setAttribute('aria-describedby', hintNode.id);
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hintNode);
}

/** "3 min ago" for an ISO time. */
export function ago(iso) {
  if (!iso) return 'never';
  const seconds = Math.round((Date.now() - Date.parse(iso)) / 1000);
  if (seconds < 5) return 'just now';
  if (seconds < 90) return `${seconds} s ago`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 129600) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86400)} days ago`;
}

/** A time as the operator reads it: local date and time to the second. */
export function when(iso) {
  const d = new Date(iso);
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}
