import { Injectable, Logger } from '@nestjs/common';
import type { ActivityUnverifiedReason, StageActivityReport, StageJobPayload } from '@stageflow/contracts';
import type { RunStageDefinition } from '@stageflow/pipeline';
import { join } from 'node:path';
import { BrowserHostClient } from '../browser-host.client';
import type { AttemptPaths } from '../stage-workspace.adapter';
import { ActivityFiles } from './activity-files.adapter';
import { readActivity } from './agent-browser-activity';
import { ACTIVITY_HEADER, agentBrowserWrapperScript } from './agent-browser-wrapper';

const AGENT_BROWSER = 'agent-browser';
/** dash's search path when PATH is unset: what a stage without PATH would search. */
const SHELL_DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** A wrapper line is under 100 bytes: this is some 80 000 agent-browser calls. */
const MAX_ACTIVITY_BYTES = 8 * 1024 * 1024;

/** An attempt's soft allowlist recording, from {@link StageNavigations.record} to {@link StageNavigations.report}. */
export type NavigationRecording =
  | { state: 'recording'; dir: string; activityFile: string }
  | { state: 'unverified'; reason: ActivityUnverifiedReason; dir?: string };

interface AttemptIds {
  runId: string;
  stageId: string;
  attempt: number;
}

/**
 * The runner's half of the soft allowlist audit of profile stages
 * (docs/redaction-and-audit.md). agent-browser cannot enforce `allow_domains`
 * together with a profile, so for a stage with a `browser.profile` and a
 * non-empty `allow_domains` the runner puts an `agent-browser` wrapper first
 * on the stage's PATH that records each call's navigation host; when the
 * attempt ends (any way) it reads them and hands them to browser-host, which
 * checks them against the list and writes the audit log. Other browser stages
 * are not recorded: a throw-away browser enforces its allowlist itself, and
 * without `allow_domains` there is nothing to check.
 */
@Injectable()
export class StageNavigations {
  private readonly logger = new Logger('StageNavigations');

  constructor(
    private readonly files: ActivityFiles,
    private readonly browserHost: BrowserHostClient,
  ) {}

  /**
   * Prepares the recording of an attempt that is audited, before its process starts:
   * the real agent-browser is the first on the PATH of `env` (seen from the stage's
   * cwd); the wrapper's folder goes in front of it (`env.PATH` is changed). With no
   * agent-browser on that PATH there is no wrapper, so the stage gets the usual
   * "not found", and the report says `agent_browser_not_found`.
   *
   * @returns undefined for a stage that is not audited
   */
  record(job: StageJobPayload, stage: RunStageDefinition, paths: AttemptPaths, env: Record<string, string>): NavigationRecording | undefined {
    const browser = stage.browser;
    if (!browser?.profile || browser.allowDomains.length === 0) return undefined;
    const ids = { runId: job.runId, stageId: job.stageId, attempt: job.attempt, profile: browser.profile };
    const path = env['PATH'] ?? SHELL_DEFAULT_PATH;
    const real = this.files.findExecutable(AGENT_BROWSER, path, paths.cwd);
    if (!real) {
      this.logger.warn({ ...ids, msg: 'no agent-browser on the stage\'s PATH: its navigations cannot be checked against allow_domains' });
      return { state: 'unverified', reason: 'agent_browser_not_found' };
    }
    const dir = join(paths.own, `${AGENT_BROWSER}-${job.attempt}`);
    const activityFile = join(dir, 'activity.jsonl');
    try {
      if (dir.includes(':')) throw new Error(`the work dir ${dir} contains ":", which PATH cannot hold; choose a STAGEFLOW_WORK_DIR without one`);
      const bin = this.files.prepare(dir, AGENT_BROWSER, agentBrowserWrapperScript(real, activityFile), activityFile, ACTIVITY_HEADER);
      env['PATH'] = `${bin}:${path}`;
      return { state: 'recording', dir, activityFile };
    } catch (error) {
      this.logger.warn({ ...ids, msg: `could not set up the agent-browser wrapper, so the stage runs without it: ${(error as Error).message}` });
      return { state: 'unverified', reason: 'activity_unreadable', dir };
    }
  }

  /**
   * Reads what the wrapper recorded, removes its folder, and reports the hosts to
   * browser-host. Never throws: a report that does not arrive is recorded by
   * browser-host as `allowlist_unverified` (`activity_not_reported`) once it is overdue.
   */
  async report(sessionId: string, recording: NavigationRecording | undefined, ids: AttemptIds): Promise<void> {
    if (!recording) return;
    let report: StageActivityReport;
    let calls = 0;
    if (recording.state === 'recording') {
      ({ calls, ...report } = readActivity(this.files.read(recording.activityFile, MAX_ACTIVITY_BYTES)));
    } else {
      report = { navigationHosts: [], unverified: recording.reason };
    }
    if (recording.dir) {
      try {
        this.files.remove(recording.dir);
      } catch (error) {
        this.logger.warn({ ...ids, msg: `could not remove the agent-browser wrapper: ${(error as Error).message}` });
      }
    }
    try {
      await this.browserHost.reportActivity(sessionId, report);
      const unverified = report.unverified ? `; unverified: ${report.unverified}` : '';
      this.logger.log({ ...ids, msg: `reported ${report.navigationHosts.length} navigation host(s) of ${calls} agent-browser call(s) for the allowlist audit${unverified}` });
    } catch (error) {
      this.logger.warn({ ...ids, msg: `could not report the stage's navigations for the allowlist audit: ${(error as Error).message}` });
    }
  }
}
