/** Removes the stack the global setup started, volumes included (STAGEFLOW_E2E_KEEP=1 keeps it for debugging). */
import { compose, E2E_PROJECT } from './compose-stack';

export default async function teardown(): Promise<void> {
  if (process.env['STAGEFLOW_E2E_STARTED'] !== '1') return;
  if (process.env['STAGEFLOW_E2E_KEEP']) {
    process.stderr.write(`[e2e] STAGEFLOW_E2E_KEEP is set: leaving project ${E2E_PROJECT} running at ${process.env['STAGEFLOW_E2E_URL']}\n`);
    return;
  }
  const down = await compose(['down', '-v', '--remove-orphans'], {}, 120_000);
  if (down.code !== 0) process.stderr.write(`[e2e] docker compose down failed (exit ${down.code}):\n${down.output}\n`);
}
