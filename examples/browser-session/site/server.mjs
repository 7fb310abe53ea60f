// A neutral demo site for examples/browser-session: a sign-in page, an account
// page that shows who is signed in, and two pages of "work" (orders, invoices)
// that need the login. No dependencies; nothing real behind it. Runs in the
// `demo-site` container of docker-compose.yml (http://demo-site:4300 on the stack
// network) or locally: `node server.mjs`.
//
// Signing in has what real sign-ins put in a live view's way:
// - the form (POST /login) checks the password and answers with a page that asks
//   `confirm("Stay signed in on this device?")`: OK sets a persistent session
//   cookie (30 days), Cancel one that ends with the browser (POST /login/finish);
// - "Sign in with a popup" opens the same form in a popup window (window.open);
//   the popup posts the result to the page that opened it (postMessage) and
//   closes, and that page finishes the sign-in, with the same question.
// The sign-in pages have a fixed layout (LAYOUT, CSS pixels from the page's top
// left corner), so a script can click them from the picture of a live view
// alone (tests/e2e/login-live-view.e2e-spec.ts does).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const PORT = Number(process.env.SITE_PORT ?? 4300);
const HOST = process.env.SITE_HOST ?? '127.0.0.1';
// Signs session cookies, so a restart keeps everyone signed in. A demo secret:
// this site guards nothing.
const SECRET = process.env.SITE_SECRET ?? 'stageflow-demo-site';
const USERS = { ada: 'lovelace', grace: 'hopper' };
const THIRTY_DAYS = 30 * 24 * 3600;
/** How long the result of a correct password may wait for the "stay signed in" answer. */
const SIGN_IN_CODE_MS = 5 * 60_000;
/** Where the sign-in form's controls are, in CSS pixels: the same on /login and in the popup. */
const LAYOUT = {
  username: { left: 120, top: 96, width: 240, height: 36 },
  password: { left: 120, top: 148, width: 240, height: 36 },
  signIn: { left: 120, top: 200, width: 110, height: 36 },
  popup: { left: 120, top: 260, width: 240, height: 36 },
};

const escape = (text) =>
  String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
const mac = (text) => createHmac('sha256', SECRET).update(text).digest('base64url');
const sign = (user) => `${user}.${mac(user)}`;
const sameText = (a, b) => {
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * The result of a correct password, before the "stay signed in" answer: who and
 * until when, signed. It rides in a form field (and, from the popup, in a
 * postMessage to the opener), so the password is asked for once. A demo: it can
 * be replayed until it expires.
 */
const signInCode = (user, now = Date.now()) => {
  const body = `${user}.${now + SIGN_IN_CODE_MS}`;
  return `${body}.${mac(`sign-in:${body}`)}`;
};
function userOfCode(code, now = Date.now()) {
  const [user, expires, given] = String(code).split('.');
  if (!(user in USERS) || !given || !sameText(given, mac(`sign-in:${user}.${expires}`))) return undefined;
  return Number(expires) > now ? user : undefined;
}
const safeNext = (next) => (next && next.startsWith('/') && !next.startsWith('//') ? next : '/account');

function userOf(req) {
  const match = /(?:^|;\s*)session_id=([^;]+)/.exec(req.headers.cookie ?? '');
  if (!match) return undefined;
  const [user] = match[1].split('.');
  return user in USERS && sameText(sign(user), match[1]) ? user : undefined;
}

function page(res, title, body, status = 200, style = '') {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(`<!doctype html><html><head><meta charset="utf-8"><title>${escape(title)}</title>
<style>body{font:16px system-ui,sans-serif;margin:3rem auto;max-width:32rem}label{display:block;margin:.5rem 0}
input{font:inherit;padding:.3rem}button{font:inherit;padding:.3rem 1rem}${style}</style></head>
<body><h1>${escape(title)}</h1>${body}</body></html>`);
}

function redirect(res, location, headers = {}) {
  res.writeHead(303, { location, 'cache-control': 'no-store', ...headers });
  res.end();
}

async function formOf(req) {
  let body = '';
  for await (const chunk of req) {
    body += chunk;
    if (body.length > 10_000) throw new Error('form too large');
  }
  return new URLSearchParams(body);
}

const DATA = {
  orders: [
    { id: 'O-1001', item: 'Analytical engine gears', total: 120 },
    { id: 'O-1002', item: 'Punched cards (box)', total: 35 },
  ],
  invoices: [
    { id: 'I-2001', order: 'O-1001', paid: true },
    { id: 'I-2002', order: 'O-1002', paid: false },
  ],
};

const server = createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://site');
  const user = userOf(req);
  try {
    if (url.pathname === '/health') return void res.end('ok');
    if (url.pathname === '/' ) return redirect(res, user ? '/account' : '/login');
    const inPopup = url.pathname === '/login/popup';
    if ((url.pathname === '/login' || inPopup) && req.method === 'POST') {
      const form = await formOf(req);
      const name = form.get('user') ?? '';
      const next = safeNext(form.get('next'));
      if (USERS[name] !== undefined && USERS[name] === form.get('password')) {
        return inPopup ? popupResult(res, signInCode(name)) : signedIn(res, name, signInCode(name), next);
      }
      return loginPage(res, { next, inPopup, error: 'Wrong user or password.' }, 401);
    }
    if (url.pathname === '/login' || inPopup) return loginPage(res, { next: safeNext(url.searchParams.get('next')), inPopup });
    if (url.pathname === '/login/finish' && req.method === 'POST') {
      const form = await formOf(req);
      const name = userOfCode(form.get('code'));
      if (!name) return page(res, 'Sign in', '<p id="error">That sign-in has expired.</p><p><a href="/login">Sign in again</a></p>', 400);
      // Stay signed in: a cookie for 30 days. Otherwise a session cookie, gone when the browser closes.
      const lifetime = form.get('stay') === 'yes' ? `; Max-Age=${THIRTY_DAYS}` : '';
      const cookie = `session_id=${sign(name)}${lifetime}; Path=/; HttpOnly; SameSite=Lax`;
      return redirect(res, safeNext(form.get('next')), { 'set-cookie': cookie });
    }
    if (url.pathname === '/logout') return redirect(res, '/login', { 'set-cookie': 'session_id=; Max-Age=0; Path=/' });
    if (!user) return redirect(res, `/login?next=${encodeURIComponent(url.pathname)}`);
    if (url.pathname === '/account') {
      return page(res, 'Your account', `<p>Signed in as <strong id="user">${escape(user)}</strong>.</p>
<p><a href="/orders">Orders</a> · <a href="/invoices">Invoices</a> · <a href="/logout">Sign out</a></p>`);
    }
    if (url.pathname === '/orders' || url.pathname === '/invoices') {
      const rows = DATA[url.pathname.slice(1)];
      const items = rows.map((row) => `<li data-id="${escape(row.id)}">${escape(JSON.stringify(row))}</li>`).join('');
      return page(res, url.pathname === '/orders' ? 'Orders' : 'Invoices', `<p>Signed in as <strong id="user">${escape(user)}</strong>.</p><ul id="rows">${items}</ul>`);
    }
    return page(res, 'Not found', '<p>No such page.</p>', 404);
  } catch (error) {
    return page(res, 'Bad request', `<p>${escape(error.message)}</p>`, 400);
  }
});

const box = ({ left, top, width, height }) => `position:absolute;left:${left}px;top:${top}px;width:${width}px;height:${height}px;box-sizing:border-box;margin:0`;
/** The fixed layout of the sign-in pages (see LAYOUT): nothing on them moves with fonts or window size. */
const LOGIN_STYLE = `body{margin:0;position:relative;min-height:100vh}h1{position:absolute;left:24px;top:16px;margin:0;font-size:28px;line-height:40px}
#username{${box(LAYOUT.username)}}#password{${box(LAYOUT.password)}}#sign-in{${box(LAYOUT.signIn)}}#popup-sign-in{${box(LAYOUT.popup)}}
.label{position:absolute;left:24px;width:90px;line-height:36px;margin:0}#error,#status{position:absolute;left:120px;top:310px;margin:0;color:#a00}
.hint{position:absolute;left:24px;top:350px;margin:0;color:#555}`;

/**
 * The sign-in page, at /login and (inPopup) in the popup at /login/popup. /login
 * also has the popup button and the script that finishes a sign-in: it asks
 * "Stay signed in on this device?" and posts the answer with the sign-in code
 * (from the form's result page, or from the popup).
 */
function loginPage(res, { next, inPopup, error }, status = 200) {
  const action = inPopup ? '/login/popup' : '/login';
  const body = `<form id="sign-in-form" method="post" action="${action}">
<input type="hidden" name="next" value="${escape(next)}">
<label class="label" for="username" style="top:${LAYOUT.username.top}px">User</label><input id="username" name="user" autocomplete="username" autofocus>
<label class="label" for="password" style="top:${LAYOUT.password.top}px">Password</label><input id="password" name="password" type="password" autocomplete="current-password">
<button id="sign-in" type="submit">Sign in</button></form>
${inPopup ? '' : '<button id="popup-sign-in" type="button">Sign in with a popup</button>'}
${error ? `<p id="error">${escape(error)}</p>` : inPopup ? '' : '<p id="status"></p>'}
<p class="hint">Demo users: ada / lovelace, grace / hopper.</p>
${inPopup ? '' : finishSignIn(next, `document.getElementById('popup-sign-in').addEventListener('click', () => {
  const popup = window.open('/login/popup', 'demo-sign-in', 'popup,width=480,height=440');
  if (!popup) return;
  document.getElementById('status').textContent = 'Signing in in the popup…';
  window.addEventListener('message', function onResult(event) {
    if (event.origin !== location.origin || event.source !== popup || event.data?.type !== 'demo-site:signed-in') return;
    window.removeEventListener('message', onResult);
    // Ask once the popup has gone, so the question shows over this page.
    const waitClosed = setInterval(() => {
      if (!popup.closed) return;
      clearInterval(waitClosed);
      finish(event.data.code);
    }, 100);
  });
});`)}`;
  return page(res, inPopup ? 'Sign in (popup)' : 'Sign in', body, status, LOGIN_STYLE);
}

/** The finish form and `finish(code)`: "Stay signed in on this device?", then POST /login/finish. */
function finishSignIn(next, script) {
  return `<form id="finish" method="post" action="/login/finish"><input type="hidden" name="code"><input type="hidden" name="stay">
<input type="hidden" name="next" value="${escape(next)}"></form>
<script>
function finish(code) {
  const form = document.getElementById('finish');
  form.code.value = code;
  form.stay.value = confirm('Stay signed in on this device?') ? 'yes' : 'no';
  form.submit();
}
${script}
</script>`;
}

/** The form's answer to a correct password: the question, once the page has been drawn. */
function signedIn(res, user, code, next) {
  return page(res, 'Signed in', `<p>Password accepted for <strong id="user">${escape(user)}</strong>.</p>
${finishSignIn(next, `addEventListener('load', () => setTimeout(() => finish(${JSON.stringify(code)}), 100));`)}`);
}

/** The popup's answer to a correct password: the result goes to the opener, and the popup closes. */
function popupResult(res, code) {
  return page(res, 'Signed in', `<p>Signed in. This window closes by itself.</p>
<script>
if (window.opener) window.opener.postMessage({ type: 'demo-site:signed-in', code: ${JSON.stringify(code)} }, location.origin);
window.close();
</script>`);
}

server.listen(PORT, HOST, () => console.log(`demo site on http://${HOST}:${PORT}`));
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => server.close(() => process.exit(0)));
