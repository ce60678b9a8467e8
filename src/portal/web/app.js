// The portal's shell: sign-in (an invite link signs in at once), the signed-in frame, and a router over hash routes.
import { api, ApiFailure, session, whenSessionEnds } from './api.js';
import { announce, h, notice, show } from './dom.js';
import { currentLocale, setLocale, t } from './i18n.js';
import * as home from './pages/home.js';
import * as invoices from './pages/invoices.js';
import * as profile from './pages/profile.js';
import * as services from './pages/services.js';
import * as signIn from './pages/signin.js';
import * as tickets from './pages/tickets.js';
import * as usage from './pages/usage.js';

const LOCALE_KEY = 'portal.locale';
const TENANT_KEY = 'portal.tenant';

/** The menu, in order: hash route, message key, page. */
const MENU = [
  ['#/', 'navHome', home],
  ['#/invoices', 'navInvoices', invoices],
  ['#/usage', 'navUsage', usage],
  ['#/services', 'navServices', services],
  ['#/tickets', 'navTickets', tickets],
  ['#/profile', 'navProfile', profile],
];

const main = document.getElementById('main');
let context = null;
let rendering = 0;

/** What a failure says to the reader. */
export function describeFailure(error) {
  if (error instanceof ApiFailure) {
    if (error.status === 0) {
      return t('errorNetwork');
    }
    if (error.status === 429) {
      return t('errorRateLimited');
    }
    if (error.status === 400 || error.status === 422) {
      return error.message;
    }
  }
  return t('errorGeneric');
}

/** The route of the current hash: its page and parameters (`#/tickets/tkt_…` → tickets with an id). */
function route() {
  const hash = location.hash.startsWith('#/') ? location.hash : '#/';
  const [, section = '', id] = hash.split('/');
  const entry = MENU.find(([path]) => path === `#/${section}`);
  return entry ? { path: entry[0], page: entry[2], id: id ? decodeURIComponent(id) : null } : null;
}

async function render({ focus }) {
  const current = route();
  const ticket = ++rendering;
  main.setAttribute('aria-busy', 'true');
  show(main, h('p', { class: 'loading' }, t('loading')));
  for (const link of document.querySelectorAll('#nav-list a')) {
    if (current && link.getAttribute('href') === current.path) {
      link.setAttribute('aria-current', 'page');
    } else {
      link.removeAttribute('aria-current');
    }
  }
  const view = h('div');
  let title = t('notFound');
  try {
    if (current) {
      title = await current.page.render(view, { ...context, id: current.id, describeFailure });
    } else {
      view.append(h('h1', { tabindex: '-1' }, t('notFound')));
    }
  } catch (error) {
    if (!session.token()) {
      return; // the session ended while the page loaded: sign-in is shown instead
    }
    view.replaceChildren(h('h1', { tabindex: '-1' }, title), notice(describeFailure(error)));
  }
  if (ticket !== rendering) {
    return; // a later navigation won
  }
  show(main, view);
  main.removeAttribute('aria-busy');
  document.title = `${title} – ${context.tenant.name}`;
  if (focus) {
    main.querySelector('h1')?.focus();
  }
}

function buildShell() {
  const header = document.getElementById('site-header');
  document.getElementById('brand').textContent = context.tenant.name;
  document.getElementById('nav').setAttribute('aria-label', t('navLabel'));
  const signOut = document.getElementById('sign-out');
  signOut.textContent = t('signOut');
  signOut.onclick = () => endSession();
  show(
    document.getElementById('nav-list'),
    MENU.map(([path, key]) => h('li', {}, h('a', { href: path }, t(key)))),
  );
  document.getElementById('nav').hidden = false;
  signOut.hidden = false;
  header.hidden = false;
}

/** Signs out (the token stops working on the server at once) and shows sign-in. */
async function endSession() {
  try {
    await api.delete('portal/session');
  } catch {
    // already ended on the server: forgetting it here is all that is left
  }
  session.clear();
  showSignIn({ message: t('signedOut'), kind: 'ok' });
}

function showSignIn(message) {
  context = null;
  // Signed out, the header names the portal alone: no menu, nothing to sign out of.
  document.getElementById('brand').textContent = t('appTitle');
  document.getElementById('nav').hidden = true;
  document.getElementById('sign-out').hidden = true;
  document.getElementById('site-header').hidden = false;
  document.title = `${t('signInTitle')} – ${t('appTitle')}`;
  main.removeAttribute('aria-busy');
  signIn.render(main, {
    tenant: sessionStorage.getItem(TENANT_KEY),
    message,
    describeFailure,
    signedIn: (token) => {
      session.save(token);
      start({ focus: true });
    },
  });
}

/** With a token: the session's subscriber and tenant, the tenant's language, the frame and the page of the hash. */
async function start({ focus }) {
  try {
    const info = await api.get('portal/session');
    context = { subscriberId: info.subscriber_id, tenant: info.tenant, plans: info.plans };
  } catch (error) {
    session.clear();
    showSignIn({ message: describeFailure(error) });
    return;
  }
  setLocale(context.tenant.locale);
  sessionStorage.setItem(LOCALE_KEY, currentLocale());
  buildShell();
  await render({ focus });
}

async function boot() {
  setLocale(sessionStorage.getItem(LOCALE_KEY) ?? navigator.language);
  document.getElementById('skip-link').textContent = t('skip');
  // The skip link moves focus to the content without touching the hash the router reads.
  document.getElementById('skip-link').addEventListener('click', (event) => {
    event.preventDefault();
    main.focus();
  });
  whenSessionEnds(() => showSignIn({ message: t('sessionEnded') }));
  window.addEventListener('hashchange', () => context && render({ focus: true }));

  const params = new URLSearchParams(location.search);
  if (params.has('tenant')) {
    sessionStorage.setItem(TENANT_KEY, params.get('tenant'));
  }
  const invite = params.get('invite');
  if (invite) {
    // The code works once: it leaves the address bar (and the history) before it is used.
    params.delete('invite');
    const query = params.toString();
    history.replaceState(null, '', `${location.pathname}${query ? `?${query}` : ''}${location.hash}`);
    show(main, h('p', { class: 'loading', role: 'status' }, t('signingIn')));
    try {
      const signed = await api.post('portal/sessions', { invite_code: invite }, { auth: false });
      session.save(signed.token);
    } catch (error) {
      const expired = error instanceof ApiFailure && error.code === 'invalid_invite';
      showSignIn({ message: expired ? t('inviteInvalid') : describeFailure(error) });
      return;
    }
  }
  if (session.token()) {
    await start({ focus: false });
    announce(document.title);
  } else {
    showSignIn(null);
  }
}

boot();
