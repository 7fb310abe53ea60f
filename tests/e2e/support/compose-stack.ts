/**
 * The composed stack as the e2e tier sees it: `docker compose` under its own
 * project name, so it never touches a developer's `docker compose up`.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

export const REPO_ROOT = resolve(__dirname, '../../..');
export const E2E_PROJECT = 'stageflow-e2e';
/** The stack's network and browser-host id (STAGEFLOW_NETWORK): its own, so a dev stack on the same daemon is untouched. */
export const E2E_NETWORK = 'stageflow-e2e';
/** Where compose output is kept for a failed run (tmp/ is ignored by git and docker). */
export const E2E_LOG_DIR = join(REPO_ROOT, 'tmp', 'e2e');

export interface CommandResult {
  code: number;
  output: string;
}

/** Runs `docker compose -p stageflow-e2e …` in the repo root; never throws for a non-zero exit. */
export function compose(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 60_000): Promise<CommandResult> {
  return run('docker', ['compose', '-p', E2E_PROJECT, '-f', join(REPO_ROOT, 'docker-compose.yml'), ...args], { STAGEFLOW_NETWORK: E2E_NETWORK, ...env }, timeoutMs);
}

export function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 60_000): Promise<CommandResult> {
  return new Promise((resolvePromise) => {
    const child = spawn(cmd, args, { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => chunks.push(c));
    const timer = setTimeout(() => {
      chunks.push(Buffer.from(`\n[e2e] ${cmd} ${args.join(' ')} did not finish within ${timeoutMs} ms; killed\n`));
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (err) => chunks.push(Buffer.from(`\n[e2e] cannot run ${cmd}: ${err.message}\n`)));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code: code ?? 1, output: Buffer.concat(chunks).toString('utf8') });
    });
  });
}

export function saveLog(name: string, text: string): string {
  mkdirSync(E2E_LOG_DIR, { recursive: true });
  const file = join(E2E_LOG_DIR, name);
  writeFileSync(file, text);
  return file;
}

export function tail(text: string, lines: number): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** `preferred` when nothing listens on it, else any free loopback port. */
export async function freePort(preferred: number): Promise<number> {
  const tryListen = (port: number) =>
    new Promise<number | null>((res) => {
      const server = createServer();
      server.once('error', () => res(null));
      server.listen(port, '127.0.0.1', () => {
        const actual = (server.address() as { port: number }).port;
        server.close(() => res(actual));
      });
    });
  return (await tryListen(preferred)) ?? (await tryListen(0)) ?? preferred;
}

/** Compose service, state and health of every container of the project, e.g. `api running healthy`. */
export async function containerStates(): Promise<{ service: string; state: string; health: string }[]> {
  const ids = (await compose(['ps', '-q'])).output.split('\n').map((l) => l.trim()).filter((l) => /^[0-9a-f]{12,}$/.test(l));
  if (ids.length === 0) return [];
  const inspected = await run('docker', [
    'inspect',
    '-f',
    '{{index .Config.Labels "com.docker.compose.service"}} {{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}}',
    ...ids,
  ]);
  return inspected.output
    .split('\n')
    .map((l) => l.trim().split(' '))
    .filter((p) => p.length === 3)
    .map(([service, state, health]) => ({ service, state, health }));
}

/**
 * fetch with a deadline kept by a plain timer. `AbortSignal.timeout()` alone is
 * not enough: its timer does not hold the event loop, and neither does fetch
 * while it is still connecting to a port Docker has published but the
 * container does not serve yet; the loop drains and Jest's global setup ends
 * silently as if it had succeeded.
 */
export async function fetchWithin(url: string, timeoutMs: number, init: RequestInit = {}): Promise<Response> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  try {
    return await fetch(url, { ...init, signal: controller.signal });
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Recreates browser-host with `env` (e.g. another STAGEFLOW_BROWSER_HOST), then the
 * live-view relay: the relay lives in browser-host's network namespace
 * (`network_mode: service:browser-host`), so a relay left as it was keeps the old
 * container's namespace and every live view after it is `live_view_unreachable`
 * (docs/docker.md). Waits until both are healthy again.
 */
export async function recreateBrowserHost(env: NodeJS.ProcessEnv, timeoutMs = 180_000): Promise<void> {
  const host = await compose(['up', '-d', '--no-deps', 'browser-host'], env, timeoutMs);
  if (host.code !== 0) throw new Error(`recreating browser-host failed (exit ${host.code}):\n${tail(host.output, 30)}`);
  const relay = await compose(['up', '-d', '--no-deps', '--force-recreate', 'live-view-relay'], env, timeoutMs);
  if (relay.code !== 0) throw new Error(`recreating live-view-relay failed (exit ${relay.code}):\n${tail(relay.output, 30)}`);
  // Plain polling: the global setup loads this file too, without the test's module mapping (no @stageflow/testing).
  const services = ['browser-host', 'live-view-relay'];
  for (const deadline = Date.now() + timeoutMs; ; await new Promise((r) => setTimeout(r, 1000))) {
    const states = await containerStates();
    const waiting = services.filter((s) => !states.some((c) => c.service === s && c.state === 'running' && c.health === 'healthy'));
    if (waiting.length === 0) return;
    if (Date.now() > deadline) throw new Error(`not healthy ${timeoutMs / 1000} s after being recreated: ${waiting.join(', ')}`);
  }
}

/**
 * Browser containers browser-host started for this stack (label `stageflow.host`):
 * removed before `compose down`, which cannot remove a network they are still on.
 */
export async function removeBrowserContainers(): Promise<void> {
  const ids = (await run('docker', ['ps', '-aq', '--filter', `label=stageflow.host=${E2E_NETWORK}`])).output
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => /^[0-9a-f]{12,}$/.test(l));
  if (ids.length) await run('docker', ['rm', '-f', ...ids], {}, 60_000);
}
