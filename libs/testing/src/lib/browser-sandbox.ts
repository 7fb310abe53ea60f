import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The image the container host starts by default (docker/Dockerfile.browser-sandbox). */
export const BROWSER_SANDBOX_IMAGE = 'stageflow-browser-sandbox:local';

function repoRoot(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, 'docker', 'Dockerfile.browser-sandbox'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('docker/Dockerfile.browser-sandbox not found above the test');
    dir = up;
  }
  return dir;
}

/**
 * Builds the browser sandbox image when this Docker engine does not have it yet, the
 * way the docs say (`docker build -f docker/Dockerfile.browser-sandbox … docker`), so
 * the container tests run on a fresh CI machine. A built image is kept: it is
 * what the user builds anyway, and rebuilding it takes minutes.
 */
export async function ensureBrowserSandboxImage(): Promise<void> {
  const found = await run('docker', ['image', 'inspect', BROWSER_SANDBOX_IMAGE]).then(
    () => true,
    () => false,
  );
  if (found) return;
  await run('docker', ['build', '-q', '-f', 'docker/Dockerfile.browser-sandbox', '-t', BROWSER_SANDBOX_IMAGE, 'docker'], {
    cwd: repoRoot(),
    maxBuffer: 16 * 1024 * 1024,
    timeout: 20 * 60 * 1000,
  });
}

/** `docker <args>`, its stdout trimmed; rejects with Docker's stderr. */
export async function docker(...args: string[]): Promise<string> {
  const { stdout } = await run('docker', args, { maxBuffer: 16 * 1024 * 1024 });
  return stdout.trim();
}

/**
 * Test cleanup: removes every container labelled with this host id (any state), then
 * the given volumes and networks. Errors for things already gone are ignored.
 */
export async function removeDockerLeftovers(opts: { hostId: string; volumes?: string[]; networks?: string[] }): Promise<void> {
  const ids = (await docker('ps', '-aq', '--filter', `label=stageflow.host=${opts.hostId}`).catch(() => ''))
    .split('\n')
    .filter(Boolean);
  if (ids.length) await docker('rm', '-f', '-v', ...ids).catch(() => '');
  for (const volume of opts.volumes ?? []) await docker('volume', 'rm', '-f', volume).catch(() => '');
  for (const network of opts.networks ?? []) await docker('network', 'rm', network).catch(() => '');
}
