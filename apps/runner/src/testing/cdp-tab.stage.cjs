// A browser stage for integration tests: attaches to its own tab of the run's
// shared browser over raw CDP (AGENT_BROWSER_CDP + STAGEFLOW_CDP_TARGET, as
// agent-browser would), then `set`s a cookie or `read`s it (waiting for the
// parallel setter). Writes what it saw to STAGEFLOW_OUTPUT; `cookies` is
// there so the test sees browser-stage redaction at work.
const { writeFileSync } = require('node:fs');
const WebSocket = require('ws');

const [mode, site] = process.argv.slice(2);
const targetId = process.env.STAGEFLOW_CDP_TARGET;
const ws = new WebSocket(process.env.AGENT_BROWSER_CDP);
let nextId = 1;
const pending = new Map();
ws.on('message', (raw) => {
  const msg = JSON.parse(String(raw));
  const call = pending.get(msg.id);
  if (!call) return;
  pending.delete(msg.id);
  if (msg.error) call.reject(new Error(msg.error.message));
  else call.resolve(msg.result);
});
const send = (method, params = {}, sessionId) =>
  new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
  });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
  const evaluate = async (expression) =>
    (await send('Runtime.evaluate', { expression, returnByValue: true }, sessionId)).result.value;
  const open = async (url) => {
    await send('Page.navigate', { url }, sessionId);
    for (let i = 0; i < 200; i++) {
      if ((await evaluate('location.href')) === url && (await evaluate('document.readyState')) === 'complete') return;
      await sleep(50);
    }
    throw new Error(`page ${url} did not load`);
  };
  let cookies = '';
  if (mode === 'set') {
    await open(`${site}/set?name=shared`);
    cookies = await evaluate('document.cookie');
  } else {
    for (let i = 0; i < 300 && !cookies.includes('shared=1'); i++) {
      await open(`${site}/read`);
      cookies = await evaluate('document.cookie');
      if (!cookies.includes('shared=1')) await sleep(100);
    }
  }
  const { targetInfo } = await send('Target.getTargetInfo', { targetId });
  writeFileSync(process.env.STAGEFLOW_OUTPUT, JSON.stringify({ targetId, tabUrl: targetInfo.url, seesShared: cookies.includes('shared=1'), cookies }));
  ws.close();
}

main().catch((error) => {
  console.error(`cdp stage failed: ${error.message}`);
  process.exit(1);
});
