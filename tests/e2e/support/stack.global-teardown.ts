/** Removes the stack the global setup started, volumes included (STAGEFLOW_E2E_KEEP=1 keeps it for debugging). */
import { compose, E2E_PROJECT, removeBrowserContainers, run } from './compose-stack';

export default async function teardown(): Promise<void> {
  if (process.env['STAGEFLOW_E2E_STARTED'] !== '1') return;
  if (process.env['STAGEFLOW_E2E_KEEP']) {
    process.stderr.write(`[e2e] STAGEFLOW_E2E_KEEP is set: leaving project ${E2E_PROJECT} running at ${process.env['STAGEFLOW_E2E_URL']}\n`);
    return;
  }
  await removeBrowserContainers();
  const down = await compose(['down', '-v', '--remove-orphans'], {}, 120_000);
  // Profile volumes of the container host belong to the Docker daemon, not the stack;
  // remove the ones this run created (the setup noted which existed before).
  const before = new Set((process.env['STAGEFLOW_E2E_VOLUMES_BEFORE'] ?? '').split(',').filter(Boolean));
  const now = (await run('docker', ['volume', 'ls', '-q', '--filter', 'name=sf-profile-'])).output.split('\n').map((l) => l.trim()).filter(Boolean);
  const created = now.filter((v) => !before.has(v));
  if (created.length) await run('docker', ['volume', 'rm', ...created], {}, 60_000);
  if (down.code !== 0) process.stderr.write(`[e2e] docker compose down failed (exit ${down.code}):\n${down.output}\n`);
}
