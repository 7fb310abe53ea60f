// A neutral demo site for examples/browser-session: a login form that sets a
// persistent session cookie, an account page that shows who is signed in, and
// two pages of "work" (orders, invoices) that need the login. No dependencies;
// nothing real behind it. Runs in the `site` container of docker-compose.yml
// (http://site:4300 on the stack network) or locally: `node server.mjs`.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const PORT = Number(process.env.SITE_PORT ?? 4300);
const HOST = process.env.SITE_HOST ?? '127.0.0.1';
// Signs session cookies, so a restart keeps everyone signed in. A demo secret:
// this site guards nothing.
const SECRET = process.env.SITE_SECRET ?? 'stageflow-demo-site';
const USERS = { ada: 'lovelace', grace: 'hopper' };
const THIRTY_DAYS = 30 * 24 * 3600;

const escape = (text) =>
  String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
const sign = (user) => `${user}.${createHmac('sha256', SECRET).update(user).digest('base64url')}`;

function userOf(req) {
  const match = /(?:^|;\s*)session_id=([^;]+)/.exec(req.headers.cookie ?? '');
  if (!match) return undefined;
  const [user] = match[1].split('.');
  const expected = Buffer.from(sign(user));
  const given = Buffer.from(match[1]);
  return user in USERS && expected.length === given.length && timingSafeEqual(expected, given) ? user : undefined;
}

function page(res, title, body, status = 200) {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(`<!doctype html><html><head><meta charset="utf-8"><title>${escape(title)}</title>
<style>body{font:16px system-ui,sans-serif;margin:3rem auto;max-width:32rem}label{display:block;margin:.5rem 0}
input{font:inherit;padding:.3rem}button{font:inherit;padding:.3rem 1rem}</style></head>
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
    if (url.pathname === '/login' && req.method === 'POST') {
      const form = await formOf(req);
      const name = form.get('user') ?? '';
      if (USERS[name] !== undefined && USERS[name] === form.get('password')) {
        const next = form.get('next') ?? '/account';
        const cookie = `session_id=${sign(name)}; Max-Age=${THIRTY_DAYS}; Path=/; HttpOnly; SameSite=Lax`;
        return redirect(res, next.startsWith('/') && !next.startsWith('//') ? next : '/account', { 'set-cookie': cookie });
      }
      return page(res, 'Sign in', `<p id="error">Wrong user or password.</p>${loginForm(url)}`, 401);
    }
    if (url.pathname === '/login') return page(res, 'Sign in', loginForm(url));
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

function loginForm(url) {
  const next = url.searchParams.get('next') ?? '/account';
  return `<form method="post" action="/login">
<input type="hidden" name="next" value="${escape(next)}">
<label>User <input id="username" name="user" autocomplete="username" autofocus></label>
<label>Password <input id="password" name="password" type="password" autocomplete="current-password"></label>
<button id="sign-in" type="submit">Sign in</button></form>
<p>Demo users: ada / lovelace, grace / hopper.</p>`;
}

server.listen(PORT, HOST, () => console.log(`demo site on http://${HOST}:${PORT}`));
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => server.close(() => process.exit(0)));
