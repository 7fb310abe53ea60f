/**
 * Brings the stack of docker-compose.yml up under project `stageflow-e2e` on a
 * free loopback port with a fresh token, waits until the api answers
 * `GET /api/health` and every container is healthy, and hands the api's URL
 * and token to the tests (STAGEFLOW_E2E_URL, STAGEFLOW_E2E_TOKEN).
 *
 * Jest skips the global teardown when the setup throws, so a failed start
 * prints the containers' logs and removes the stack itself before failing.
 */
import { randomBytes } from 'node:crypto';
import { compose, containerStates, E2E_PROJECT, fetchWithin, freePort, removeBrowserContainers, run, saveLog, tail } from './compose-stack';

const UP_TIMEOUT_MS = Number(process.env['STAGEFLOW_E2E_UP_TIMEOUT_MS'] ?? 20 * 60_000);
const HEALTHY_TIMEOUT_MS = Number(process.env['STAGEFLOW_E2E_HEALTHY_TIMEOUT_MS'] ?? 180_000);
const SERVICES = ['redis', 'api', 'runner', 'browser-host', 'live-view-relay', 'demo-site'];
/** Services that run once and exit 0 (browser-sandbox only builds and checks the sandbox image). */
const ONE_SHOT = ['browser-sandbox'];

function say(line: string): void {
  process.stderr.write(`[e2e] ${line}\n`);
}

export default async function setup(): Promise<void> {
  if (process.env['STAGEFLOW_E2E_URL']) {
    say(`using the stack already running at ${process.env['STAGEFLOW_E2E_URL']}`);
    return;
  }
  // A stack left over from an interrupted run would hold the port and stale volumes.
  await removeBrowserContainers();
  await compose(['down', '-v', '--remove-orphans'], {}, 120_000);
  const volumes = (await run('docker', ['volume', 'ls', '-q', '--filter', 'name=sf-profile-'])).output;
  process.env['STAGEFLOW_E2E_VOLUMES_BEFORE'] = volumes.split('\n').map((l) => l.trim()).filter(Boolean).join(',');
  const port = await freePort(Number(process.env['STAGEFLOW_E2E_PORT'] ?? 3900));
  const token = `e2e-${randomBytes(24).toString('hex')}`;
  const env = { STAGEFLOW_PORT: String(port), STAGEFLOW_API_TOKEN: token };
  const started = Date.now();
  try {
    say(`docker compose -p ${E2E_PROJECT} up -d --build (api on 127.0.0.1:${port}) …`);
    const up = await compose(['up', '-d', '--build'], env, UP_TIMEOUT_MS);
    const upLog = saveLog('compose-up.log', up.output);
    if (up.code !== 0) throw new Error(`docker compose up failed (exit ${up.code}); full output in ${upLog}:\n${tail(up.output, 60)}`);
    say(`images built and containers created in ${Math.round((Date.now() - started) / 1000)} s; waiting for health …`);
    await waitUntilHealthy(`http://127.0.0.1:${port}`);
    say(`stack healthy after ${Math.round((Date.now() - started) / 1000)} s`);
  } catch (error) {
    const logs = await compose(['logs', '--no-color', '--tail', '80'], env);
    const logFile = saveLog('compose-logs.log', logs.output);
    say(`the stack did not come up; last container logs (all in ${logFile}):\n${tail(logs.output, 150)}`);
    if (!process.env['STAGEFLOW_E2E_KEEP']) {
      await removeBrowserContainers();
      await compose(['down', '-v', '--remove-orphans'], env, 120_000);
    }
    throw error;
  }
  process.env['STAGEFLOW_E2E_URL'] = `http://127.0.0.1:${port}`;
  process.env['STAGEFLOW_E2E_TOKEN'] = token;
  process.env['STAGEFLOW_E2E_STARTED'] = '1';
}

async function waitUntilHealthy(baseUrl: string): Promise<void> {
  const deadline = Date.now() + HEALTHY_TIMEOUT_MS;
  let apiStatus = 'no answer yet';
  let unhealthy: string[] = SERVICES;
  while (Date.now() < deadline) {
    try {
      const res = await fetchWithin(`${baseUrl}/api/health`, 3000);
      apiStatus = `HTTP ${res.status} ${(await res.text()).slice(0, 200)}`;
    } catch (error) {
      apiStatus = `no answer (${(error as Error).message})`;
    }
    const states = await containerStates();
    unhealthy = SERVICES.filter((s) => !states.some((c) => c.service === s && c.state === 'running' && c.health === 'healthy'));
    const exited = states.filter((c) => c.state !== 'running' && !ONE_SHOT.includes(c.service));
    if (exited.length) {
      throw new Error(`containers stopped while starting: ${exited.map((c) => `${c.service} (${c.state})`).join(', ')}`);
    }
    if (apiStatus.startsWith('HTTP 200') && unhealthy.length === 0) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(
    `the stack was not healthy within ${HEALTHY_TIMEOUT_MS / 1000} s: GET ${baseUrl}/api/health → ${apiStatus}; ` +
      `not healthy: ${unhealthy.join(', ') || 'none'}`,
  );
}
