import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SETTINGS } from '../browsers/testing/fake-browser-host';
import { Logger } from '@nestjs/common';
import { FsAgentBrowserSessions } from './agent-browser-sessions.adapter';

beforeAll(() => Logger.overrideLogger(false));

/**
 * Real files and a stand-in daemon: a Node process started the way agent-browser
 * starts its daemon (environment naming the session and socket dir, pid file), that
 * removes its files on SIGTERM as agent-browser 0.41.2 does.
 */
const DAEMON = `
const fs = require('fs'), path = require('path');
const dir = process.env.AGENT_BROWSER_SOCKET_DIR, name = process.env.AGENT_BROWSER_SESSION;
fs.writeFileSync(path.join(dir, name + '.pid'), String(process.pid));
fs.writeFileSync(path.join(dir, name + '.version'), '0.41.2');
process.on('SIGTERM', () => { for (const ext of ['.pid', '.version']) fs.rmSync(path.join(dir, name + ext), { force: true }); process.exit(0); });
setInterval(() => {}, 1000);
`;

let root: string;
let daemons: ChildProcess[] = [];
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'sf-ab-'));
  daemons = [];
});
afterEach(async () => {
  for (const d of daemons) if (d.exitCode === null && d.signalCode === null) d.kill('SIGKILL');
  await rm(root, { recursive: true, force: true });
});

function adapter() {
  return new FsAgentBrowserSessions({ ...SETTINGS, runtimeDir: join(root, 'run') });
}

async function startDaemon(socketDir: string, session: string, extraEnv: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', DAEMON], {
    env: { AGENT_BROWSER_SOCKET_DIR: socketDir, AGENT_BROWSER_SESSION: session, AGENT_BROWSER_DAEMON: '1', ...extraEnv },
    stdio: 'ignore',
  });
  daemons.push(child);
  const pidFile = join(socketDir, `${session}.pid`);
  for (let i = 0; i < 200 && !(await stat(pidFile).catch(() => undefined)); i++) await new Promise((r) => setTimeout(r, 25));
  return child;
}

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => child.once('exit', () => resolve()));

describe('agent-browser sessions on disk', () => {
  it('makes an owner-only socket dir per run that names its run', async () => {
    const agents = adapter();
    const dir = await agents.prepareRunDir('run1');
    expect(dir).toBe(join(root, 'run', 'run1'));
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(root, 'run'))).mode & 0o777).toBe(0o700);
    expect(await agents.listRunDirs()).toEqual([{ dir, runId: 'run1' }]);
  });

  it('binds the session to the stage tab the way agent-browser reads it', async () => {
    const agents = adapter();
    const dir = await agents.prepareRunDir('run1');
    await agents.bindTab(dir, 'sf-run1-a-1', 'TAB1');
    expect(JSON.parse(await readFile(join(dir, 'sf-run1-a-1.target'), 'utf8'))).toEqual({ targetId: 'TAB1', url: 'about:blank', pinned: true });
  });

  it('ends the session\'s daemon and removes its files, and only its own', async () => {
    const agents = adapter();
    const dir = await agents.prepareRunDir('run1');
    const mine = await startDaemon(dir, 'sf-run1-a-1');
    const neighbour = await startDaemon(dir, 'sf-run1-a-10');
    await agents.bindTab(dir, 'sf-run1-a-1', 'TAB1');
    await writeFile(join(dir, 'sf-run1-a-1.sock'), '');

    await expect(agents.end(dir, 'sf-run1-a-1')).resolves.toEqual({ boundTargetId: 'TAB1' });
    await exited(mine);
    expect(mine.signalCode ?? mine.exitCode).toBe(0);
    expect(neighbour.exitCode).toBeNull();
    expect((await readdir(dir)).sort()).toEqual(['.stageflow-run', 'sf-run1-a-10.pid', 'sf-run1-a-10.version']);
  });

  it('rebinds a running session to another tab: its daemon ends (it would keep the old tab) and the binding names the new one', async () => {
    const agents = adapter();
    const dir = await agents.prepareRunDir('run1');
    const daemon = await startDaemon(dir, 'sf-run1-a-1');
    await agents.bindTab(dir, 'sf-run1-a-1', 'TAB1');

    await agents.rebind(dir, 'sf-run1-a-1', 'TAB2');

    await exited(daemon);
    expect(JSON.parse(await readFile(join(dir, 'sf-run1-a-1.target'), 'utf8'))).toMatchObject({ targetId: 'TAB2', pinned: true });
    expect((await readdir(dir)).sort()).toEqual(['.stageflow-run', 'sf-run1-a-1.target']);
    // Without a daemon (the stage has not run a command yet) it only rewrites the binding.
    await agents.rebind(dir, 'sf-run1-a-1', 'TAB3');
    expect(JSON.parse(await readFile(join(dir, 'sf-run1-a-1.target'), 'utf8'))).toMatchObject({ targetId: 'TAB3' });
  });

  it('never signals a process the pid file names but that is not that session\'s daemon', async () => {
    const agents = adapter();
    const dir = await agents.prepareRunDir('run1');
    const stranger = await startDaemon(dir, 'sf-run1-b-1');
    // A stale pid file of another session pointing at a live, unrelated process.
    await writeFile(join(dir, 'sf-run1-c-1.pid'), String(stranger.pid));
    await agents.end(dir, 'sf-run1-c-1');
    expect(stranger.exitCode).toBeNull();
    expect(await readdir(dir)).not.toContain('sf-run1-c-1.pid');
  });

  it('removes a run\'s socket dir', async () => {
    const agents = adapter();
    const dir = await agents.prepareRunDir('run1');
    await agents.removeRunDir('run1');
    await expect(stat(dir)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
