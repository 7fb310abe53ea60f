import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readDevToolsActivePort, removeDevToolsActivePort } from './devtools-active-port';

const ID = '96f4a19d-f77f-4836-ab3d-cf3a057a959e';

describe('readDevToolsActivePort', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sf-cdp-unit-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('waits for the file and for it to be complete', async () => {
    const file = join(dir, 'DevToolsActivePort');
    setTimeout(() => void writeFile(file, '41234\n/devtools/br'), 30);
    setTimeout(() => void writeFile(file, `41234\n/devtools/browser/${ID}`), 120);
    await expect(readDevToolsActivePort(dir, { timeoutMs: 3000, pollMs: 10 })).resolves.toMatchObject({
      port: 41234,
      wsEndpoint: `ws://127.0.0.1:41234/devtools/browser/${ID}`,
    });
  });

  it('gives up with cdp_timeout when nothing is written, without naming the profile folder', async () => {
    const error = await readDevToolsActivePort(dir, { timeoutMs: 80, pollMs: 10 }).catch((e: Error) => e);
    expect(error).toMatchObject({ code: 'cdp_timeout' });
    expect((error as Error).message).not.toContain(dir);
  });

  it('reports a file that never becomes valid as cdp_bad_port_file', async () => {
    await writeFile(join(dir, 'DevToolsActivePort'), 'garbage');
    await expect(readDevToolsActivePort(dir, { timeoutMs: 80, pollMs: 10 })).rejects.toMatchObject({
      code: 'cdp_bad_port_file',
    });
  });

  it('stops early with the abort reason (the browser exited)', async () => {
    const controller = new AbortController();
    const exited = new Error('browser exited with code 21');
    setTimeout(() => controller.abort(exited), 30);
    await expect(readDevToolsActivePort(dir, { timeoutMs: 5000, pollMs: 10, signal: controller.signal })).rejects.toBe(
      exited,
    );
  });

  it('removeDevToolsActivePort deletes a stale file and tolerates a missing one', async () => {
    await writeFile(join(dir, 'DevToolsActivePort'), `1\n/devtools/browser/${ID}`);
    await removeDevToolsActivePort(dir);
    await removeDevToolsActivePort(dir);
    await expect(readDevToolsActivePort(dir, { timeoutMs: 30, pollMs: 10 })).rejects.toMatchObject({
      code: 'cdp_timeout',
    });
  });
});
