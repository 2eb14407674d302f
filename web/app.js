// The dashboard's entry point: sign-in, the navigation, and the view for the current address.
import { api } from './api.js';
import { field, h, put } from './dom.js';
import { problemList } from './ui.js';
import { accountsView } from './views/accounts.js';
import { agentsView } from './views/agents.js';
import { checkerView } from './views/checker.js';
import { notificationsView } from './views/notifications.js';
import { riskView } from './views/risk.js';
import { signalsView } from './views/signals.js';
import { sourcesView } from './views/sources.js';
import { tradesView } from './views/trades.js';

const VIEWS = [
  { path: 'accounts', label: 'Accounts', render: accountsView },
  { path: 'sources', label: 'Sources', render: sourcesView },
  { path: 'agents', label: 'Agents', render: agentsView },
  { path: 'signals', label: 'Signal log', render: signalsView },
  { path: 'trades', label: 'Trades', render: tradesView },
  { path: 'risk', label: 'Risk', render: riskView },
  { path: 'checker', label: 'Checker', render: checkerView },
  { path: 'notifications', label: 'Notifications', render: notificationsView },
];

const root = document.getElementById('app');
/** Stops the current view's background work (the live log's stream) when another is shown. */
let leaveView = null;

async function boot() {
  try {
    const session = await api('GET', '/api/dashboard/session');
    if (session.signedIn) showShell();
    else showSignIn();
  } catch {
    showSignIn('The server could not be reached. Reload to try again.');
  }
}

let signingIn = false;

function showSignIn(message) {
  leave();
  signingIn = true;
  const problems = h('div');
  const token = h('input', {
    type: 'password',
    name: 'token',
    autocomplete: 'current-password',
    required: true,
    spellcheck: 'false',
  });
  const form = h(
    'form',
    { class: 'signin card', 'aria-labelledby': 'signin-title' },
    h('h1', { id: 'signin-title' }, 'signalgate'),
    h('p', null, message ?? 'Sign in with the admin token.'),
    field('Admin token', token),
    problems,
    h('button', { type: 'submit' }, 'Sign in'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    put(problems);
    try {
      await api('POST', '/api/dashboard/session', { token: token.value });
      token.value = '';
      signingIn = false;
      showShell();
    } catch (error) {
      put(problems, problemList(error));
      token.select();
    }
  });
  put(root, h('main', { class: 'center' }, form));
  token.focus();
}

function showShell() {
  const nav = h(
    'nav',
    { 'aria-label': 'Sections' },
    h(
      'ul',
      null,
      VIEWS.map((v) => h('li', null, h('a', { href: `#${v.path}`, 'data-view': v.path }, v.label))),
    ),
  );
  const signOut = h('button', { type: 'button', class: 'secondary', onclick: doSignOut }, 'Sign out');
  const main = h('main', { id: 'view', tabindex: '-1' });
  put(
    root,
    h('a', { class: 'skip', href: '#view' }, 'Skip to content'),
    h('header', { class: 'top' }, h('span', { class: 'brand' }, 'signalgate'), nav, signOut),
    main,
  );
  window.onhashchange = () => {
    route(main, nav);
    // Keyboard and screen reader users land on the new section, not back at the top.
    main.focus();
  };
  route(main, nav);
}

function route(main, nav) {
  const path = location.hash.replace(/^#/, '').split('/')[0] || 'accounts';
  const view = VIEWS.find((v) => v.path === path) ?? VIEWS[0];
  for (const link of nav.querySelectorAll('a')) {
    if (link.dataset.view === view.path) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  leave();
  document.title = `${view.label} · signalgate`;
  put(main, h('h1', null, view.label));
  const body = h('div');
  main.append(body);
  leaveView = view.render(body) ?? null;
}

function leave() {
  if (typeof leaveView === 'function') leaveView();
  leaveView = null;
}

async function doSignOut() {
  try {
    await api('DELETE', '/api/dashboard/session');
  } finally {
    window.onhashchange = null;
    showSignIn('Signed out. Sign in with the admin token.');
  }
}

window.addEventListener('signed-out', () => {
  // Several calls in flight may each learn it; the form is shown once.
  if (!signingIn) showSignIn('The session ended. Sign in with the admin token.');
});

boot();
