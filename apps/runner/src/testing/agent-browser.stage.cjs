// A browser stage for integration tests that drives its tab with the real
// agent-browser CLI, through nothing but the environment the runner gives it
// (AGENT_BROWSER_CDP, _SESSION, _PIN_TAB, _SOCKET_DIR, ...). Writes what it saw
// to STAGEFLOW_OUTPUT as booleans and URLs (cookie values would be redacted).
//
//   set   <agent-browser> <site> <sid>                      open /set?sid=...
//   visit <agent-browser> <site> <sid> <path> <sync> <peer>  open /<path>, wait for the peer's, read back
//   check <site>                                            the run's tabs and agent-browser files
const { execFileSync } = require('node:child_process');
const { existsSync, readdirSync, readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const [mode, ...args] = process.argv.slice(2);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const output = (value) => writeFileSync(process.env.STAGEFLOW_OUTPUT, JSON.stringify(value));

async function main() {
  if (mode === 'check') {
    const cdp = new URL(process.env.AGENT_BROWSER_CDP);
    const tabs = await (await fetch(`http://${cdp.host}/json/list`)).json();
    output({
      pageUrls: tabs.filter((t) => t.type === 'page').map((t) => t.url),
      socketFiles: readdirSync(process.env.AGENT_BROWSER_SOCKET_DIR),
    });
    return;
  }
  const [ab, site, sid, path, sync, peer] = args;
  const run = (...cmd) => execFileSync(ab, cmd, { encoding: 'utf8', timeout: 30_000 }).trim();
  if (mode === 'set') {
    run('open', `${site}/set?sid=${sid}`);
    output({ agentName: process.env.AGENT_BROWSER_SESSION, onSetPage: run('get', 'url') === `${site}/set?sid=${sid}`, seesSid: run('eval', 'document.cookie').includes(`sid=${sid}`) });
    return;
  }
  run('open', `${site}/${path}`);
  writeFileSync(join(sync, path), '');
  for (let i = 0; i < 300 && !existsSync(join(sync, peer)); i++) await sleep(100);
  const url = run('get', 'url');
  const snapshot = run('snapshot');
  const cookie = run('eval', 'document.cookie');
  const session = process.env.AGENT_BROWSER_SESSION;
  const targetFile = join(process.env.AGENT_BROWSER_SOCKET_DIR, `${session}.target`);
  const target = existsSync(targetFile) ? JSON.parse(readFileSync(targetFile, 'utf8')) : {};
  const pidFile = join(process.env.AGENT_BROWSER_SOCKET_DIR, `${session}.pid`);
  output({
    agentName: session,
    daemonPid: existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').trim()) : 0,
    peerOpened: existsSync(join(sync, peer)),
    url,
    snapshotShowsOwnPage: snapshot.includes(`page ${path}`),
    snapshotShowsSid: snapshot.includes(`sid=${sid}`),
    evalSeesSid: cookie.includes(`sid=${sid}`),
    boundToStageTab: target.targetId === process.env.STAGEFLOW_CDP_TARGET,
    targetUrl: target.url,
  });
}

main().catch((error) => {
  console.error(`agent-browser stage failed: ${error.message}\n${error.stderr ?? ''}`);
  process.exit(1);
});
