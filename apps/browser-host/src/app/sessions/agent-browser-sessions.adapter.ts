import { Inject, Injectable, Logger } from '@nestjs/common';
import { chmod, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { BROWSER_SETTINGS, type BrowserSettings } from '../browsers/browser-host.tokens';
import { ProcessTable } from '../browsers/process-table.adapter';
import { runDirName } from './stage-session-env';

/** Marker in each run's socket dir: the run id, for the sweep (a long id is hashed in the folder name). */
const RUN_MARKER = '.stageflow-run';
const DAEMON_TERM_GRACE_MS = 3000;

/** A run's socket dir as the sweep finds it. */
export interface RunSocketDir {
  dir: string;
  /** Absent when the folder has no readable marker (not ours to interpret: removed). */
  runId?: string;
}

/**
 * agent-browser's side of stage sessions, on disk. Measured with agent-browser 0.41.2
 * (see docs/browser-sessions.md): each session's daemon keeps `<session>.sock`, `.pid`,
 * `.config`, `.stream`, `.version` and `.target` in AGENT_BROWSER_SOCKET_DIR;
 * `.target` (`{"targetId", "url", "pinned"}`) is the tab the session is bound to; the
 * daemon runs detached (parent 1) and, attached over CDP, has no idle timeout; SIGTERM
 * makes it exit and remove its files except `.target`, and leaves the browser and
 * tabs alone.
 */
export abstract class AgentBrowserSessions {
  /** The run's socket dir (AGENT_BROWSER_SOCKET_DIR); does not create it. */
  abstract socketDirOf(runId: string): string;
  /** Creates the runtime dir and the run's socket dir, both 0700. */
  abstract prepareRunDir(runId: string): Promise<string>;
  /**
   * Binds the session to the stage's tab before the stage starts: with
   * AGENT_BROWSER_PIN_TAB=1 an unbound session would open a fresh tab of its own.
   */
  abstract bindTab(socketDir: string, session: string, targetId: string): Promise<void>;
  /**
   * Moves a session that may be running to another tab ("Reopen browser tab"). A
   * running daemon keeps the tab it bound at start and, once that tab closes, answers
   * every command with `tab_gone` (measured with 0.41.2); so its daemon is ended (as in
   * {@link end}) and the session bound to the new tab: the stage's next command starts
   * a daemon on it.
   */
  abstract rebind(socketDir: string, session: string, targetId: string): Promise<void>;
  /**
   * Ends the session's daemon (SIGTERM to the pid in `<session>.pid`, after checking it
   * is that daemon; SIGKILL after 3 s) and removes its files. Returns the tab the
   * session was bound to last (it may have moved with `tab new`).
   */
  abstract end(socketDir: string, session: string): Promise<{ boundTargetId?: string }>;
  abstract removeRunDir(runId: string): Promise<void>;
  abstract listRunDirs(): Promise<RunSocketDir[]>;
}

@Injectable()
export class FsAgentBrowserSessions extends AgentBrowserSessions {
  private readonly log = new Logger('AgentBrowserSessions');
  private readonly procs = new ProcessTable();

  constructor(@Inject(BROWSER_SETTINGS) private readonly settings: BrowserSettings) {
    super();
  }

  socketDirOf(runId: string): string {
    return join(this.settings.runtimeDir, runDirName(runId));
  }

  async prepareRunDir(runId: string): Promise<string> {
    await mkdir(this.settings.runtimeDir, { recursive: true, mode: 0o700 });
    await chmod(this.settings.runtimeDir, 0o700);
    const dir = this.socketDirOf(runId);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    // mkdir's mode passes through the umask.
    await chmod(dir, 0o700);
    await writeFile(join(dir, RUN_MARKER), runId, { mode: 0o600 });
    return dir;
  }

  async bindTab(socketDir: string, session: string, targetId: string): Promise<void> {
    const binding = JSON.stringify({ targetId, url: 'about:blank', pinned: true });
    await writeFile(join(socketDir, `${session}.target`), binding, { mode: 0o600 });
  }

  async rebind(socketDir: string, session: string, targetId: string): Promise<void> {
    await this.stopDaemon(socketDir, session);
    await this.bindTab(socketDir, session, targetId);
  }

  async end(socketDir: string, session: string): Promise<{ boundTargetId?: string }> {
    await this.stopDaemon(socketDir, session);
    const bound = await readFile(join(socketDir, `${session}.target`), 'utf8').catch(() => undefined);
    let boundTargetId: string | undefined;
    try {
      const parsed = bound ? (JSON.parse(bound) as { targetId?: unknown }) : undefined;
      if (typeof parsed?.targetId === 'string') boundTargetId = parsed.targetId;
    } catch {
      // Unreadable binding: only the stage's own tab gets closed.
    }
    const files = await readdir(socketDir).catch(() => [] as string[]);
    // `<session>.` with the dot: sf-r-s-1 must not take sf-r-s-10's files.
    await Promise.all(
      files.filter((f) => f.startsWith(`${session}.`)).map((f) => rm(join(socketDir, f), { force: true, recursive: true })),
    );
    return { boundTargetId };
  }

  /** SIGTERM to the session's daemon, after checking it is that daemon; SIGKILL after 3 s. */
  private async stopDaemon(socketDir: string, session: string): Promise<void> {
    const pid = Number((await readFile(join(socketDir, `${session}.pid`), 'utf8').catch(() => '')).trim());
    if (!Number.isInteger(pid) || pid <= 0 || !this.procs.isAlive(pid)) return;
    if (!(await this.isDaemonOf(pid, socketDir, session))) {
      // A reused pid, or a daemon we cannot identify: never signal a stranger.
      this.log.warn({ msg: 'The pid file of an agent-browser session names another process; not signalling it', session, pid });
      return;
    }
    this.procs.signal(pid, 'SIGTERM');
    if (!(await this.procs.waitForExit(pid, DAEMON_TERM_GRACE_MS))) {
      this.procs.signal(pid, 'SIGKILL');
      await this.procs.waitForExit(pid, DAEMON_TERM_GRACE_MS);
    }
  }

  async removeRunDir(runId: string): Promise<void> {
    await rm(this.socketDirOf(runId), { recursive: true, force: true });
  }

  async listRunDirs(): Promise<RunSocketDir[]> {
    const names = await readdir(this.settings.runtimeDir).catch(() => [] as string[]);
    return Promise.all(
      names.map(async (name) => {
        const dir = join(this.settings.runtimeDir, name);
        const runId = (await readFile(join(dir, RUN_MARKER), 'utf8').catch(() => '')).trim();
        return runId ? { dir, runId } : { dir };
      }),
    );
  }

  /**
   * The daemon's environment names this session and dir (agent-browser starts it with
   * AGENT_BROWSER_SESSION and AGENT_BROWSER_SOCKET_DIR). When the environment is not
   * readable (another user), its executable must at least be agent-browser.
   */
  private async isDaemonOf(pid: number, socketDir: string, session: string): Promise<boolean> {
    const env = await this.procs.environ(pid);
    if (env) {
      const dir = env['AGENT_BROWSER_SOCKET_DIR'];
      return env['AGENT_BROWSER_SESSION'] === session && dir !== undefined && resolve(dir) === resolve(socketDir);
    }
    const argv = await this.procs.argv(pid);
    return argv?.[0]?.includes('agent-browser') ?? false;
  }
}
