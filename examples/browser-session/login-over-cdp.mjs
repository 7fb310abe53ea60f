// Signs in to the demo site in the browser a login gate opened, over CDP: fills
// the form in the gate's own tab, submits it, and answers the site's "Stay
// signed in on this device?" with OK (so the login outlives the browser). Then
// answer the gate with Accept (README). The scripted alternative, for scripts
// and tests; people sign in in the console's live view instead.
//
// Run it where browser-host's internal port and the browsers are reachable,
// i.e. inside the browser-host container:
//
//   docker compose exec -T browser-host node --input-type=module - "$RUN" < examples/browser-session/login-over-cdp.mjs
//
// Arguments: <run id> [user (ada)] [password (lovelace)] [gate stage id (login)].
const [runId, user = 'ada', password = 'lovelace', stageId = 'login'] = process.argv.slice(2);
if (!runId) {
  console.error('usage: login-over-cdp.mjs <run id> [user] [password] [gate stage id]');
  process.exit(2);
}
const base = process.env.BROWSER_HOST_URL ?? 'http://127.0.0.1:3002';

// The gate's current attempt has the highest-numbered session (sf-<run>-<stage>-<attempt>).
let session;
for (let attempt = 1; attempt <= 20; attempt++) {
  const res = await fetch(`${base}/internal/sessions/sf-${runId}-${stageId}-${attempt}`);
  if (res.ok) session = await res.json();
}
if (!session) {
  console.error(`no open browser session for gate "${stageId}" of run ${runId}: is the gate waiting?`);
  process.exit(1);
}

const ws = new WebSocket(session.cdpEndpoint);
await new Promise((resolve, reject) => {
  ws.onopen = resolve;
  ws.onerror = () => reject(new Error(`cannot reach the browser at ${session.cdpEndpoint}`));
});
let nextId = 1;
const pending = new Map();
let onEvent = () => undefined;
ws.onmessage = (event) => {
  const message = JSON.parse(event.data);
  if (message.method) return onEvent(message);
  const call = pending.get(message.id);
  if (!call) return;
  pending.delete(message.id);
  if (message.error) call.reject(new Error(message.error.message));
  else call.resolve(message.result);
};
const send = (method, params = {}, sessionId) =>
  new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
  });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const { sessionId } = await send('Target.attachToTarget', { targetId: session.targetId, flatten: true });
// The site asks "Stay signed in on this device?" (confirm) after the password: OK.
// The page, and every evaluate, waits until the dialog is answered.
onEvent = (message) => {
  if (message.method === 'Page.javascriptDialogOpening' && message.sessionId === sessionId) {
    send('Page.handleJavaScriptDialog', { accept: true }, sessionId).catch(() => undefined);
  }
};
await send('Page.enable', {}, sessionId);
const evaluate = async (expression) => (await send('Runtime.evaluate', { expression, returnByValue: true }, sessionId)).result.value;
const until = async (what, check, timeoutMs = 20_000) => {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(200)) if (await check()) return;
  throw new Error(`timed out waiting for ${what}`);
};

await until('the login form', () => evaluate('!!document.querySelector("#username")'));
await evaluate(`(() => {
  document.querySelector('#username').value = ${JSON.stringify(user)};
  document.querySelector('#password').value = ${JSON.stringify(password)};
  document.querySelector('#sign-in').click();
  return true;
})()`);
await until('the account page', async () => (await evaluate('location.pathname')) === '/account');
console.log(JSON.stringify({ signedIn: true, user: await evaluate('document.querySelector("#user")?.textContent') }));
ws.close();
