import { Inject, Injectable, Logger } from '@nestjs/common';
import type { LoginCheckRequest, LoginCheckResult, OpenStageSessionRequest, StageEnvelope, StageJobPayload, StageSession } from '@stageflow/contracts';
import { AttemptResult, Claim, SchemaCheck, StageAttempts } from '@stageflow/engine';
import type { LeaseGrant } from '@stageflow/leases';
import type { BrowserCheck, RunStageDefinition } from '@stageflow/pipeline';
import { RUNNER_OPTIONS } from '../runner.tokens';
import { BrowserHostClient, BrowserHostError } from './browser-host.client';
import type { ResolvedRunnerOptions } from '../runner.options';
import { type NavigationRecording, StageNavigations } from './activity/stage-navigations.service';
import { LogCollector } from './log-collector';
import { judgeOutput } from './stage-output';
import { StageProcess, StageProcessAdapter } from './stage-process.adapter';
import { StageRedaction, stageRedaction } from './stage-redaction';
import { StageWorkspace } from './stage-workspace.adapter';

type Runnable = Extract<Claim, { outcome: 'run' }>;

/** Why the runner stopped a process itself. */
type StopReason = 'timeout' | 'cancel' | 'shutdown';

interface Execution {
  job: StageJobPayload;
  process?: StageProcess;
  stopped?: StopReason;
}

/**
 * Runs one attempt of a `run` stage: input file, process group, bounded logs,
 * timeout, output file and schema, envelope. Knows the attempts it runs, so a
 * cancel (or shutdown) can stop them.
 */
@Injectable()
export class StageExecutor {
  private readonly logger = new Logger('StageExecutor');
  private readonly executions = new Set<Execution>();

  constructor(
    private readonly attempts: StageAttempts,
    private readonly processes: StageProcessAdapter,
    private readonly workspace: StageWorkspace,
    private readonly schemas: SchemaCheck,
    private readonly browserHost: BrowserHostClient,
    private readonly navigations: StageNavigations,
    @Inject(RUNNER_OPTIONS) private readonly options: ResolvedRunnerOptions,
  ) {}

  get activeCount(): number {
    return this.executions.size;
  }

  /** Stops every attempt of a run this runner executes (cancel, run failed, run abandoned). */
  cancelRun(runId: string): void {
    for (const execution of this.executions) {
      if (execution.job.runId === runId) this.stop(execution, 'cancel');
    }
  }

  /** Stops every attempt (runner shutting down after its grace period). */
  interruptAll(): void {
    for (const execution of this.executions) this.stop(execution, 'shutdown');
  }

  /** `grant`: the run's lease on the stage's `browser.profile`, when it has one. */
  async execute(job: StageJobPayload, claim: Runnable, grant?: LeaseGrant): Promise<AttemptResult> {
    const redaction = stageRedaction(claim.stage);
    return redaction.result(await this.attempt(job, claim, grant, redaction));
  }

  private async attempt(
    job: StageJobPayload,
    claim: Runnable,
    grant: LeaseGrant | undefined,
    redaction: StageRedaction,
  ): Promise<AttemptResult> {
    const { stage } = claim;
    const ids = { runId: job.runId, stageId: job.stageId, attempt: job.attempt };
    const startedAt = Date.now();
    const execution: Execution = { job };
    this.executions.add(execution);
    const logs = new LogCollector(this.options.logLimits);
    let flushing: Promise<void> = Promise.resolve();
    const flush = () => {
      const lines = logs.drain();
      if (!lines.length) return flushing;
      const tail = logs.tail();
      flushing = flushing
        .then(() => this.attempts.appendLogs(job, redaction.lines(lines), redaction.tail(tail)))
        .catch((error) => this.logger.warn({ ...ids, msg: `could not store log lines: ${(error as Error).message}` }));
      return flushing;
    };
    const flushTimer = setInterval(() => void flush(), this.options.logFlushMs);
    let timeout: NodeJS.Timeout | undefined;
    let watch: NodeJS.Timeout | undefined;
    let session: StageSession | undefined;
    let login: LoginCheckResult | undefined;
    let recording: NavigationRecording | undefined;
    try {
      const paths = this.workspace.prepare(job, stage.cwd);
      this.workspace.writeInput(paths.input, claim.input);
      if (stage.browser && this.options.browserSessions) {
        try {
          session = await this.browserHost.open(sessionRequest(job, stage, grant));
        } catch (error) {
          if (!(error instanceof BrowserHostError)) throw error;
          const why = `browser-host refused the stage session (${error.code}): ${error.message}`;
          return this.result(job, startedAt, 'failed', why, logs);
        }
        this.logger.log({ ...ids, profile: stage.browser.profile, browserId: session.browserId, msg: 'stage session opened' });
        if (stage.browser.check) {
          try {
            login = await this.browserHost.check(session.sessionId, checkRequest(stage.browser.check));
          } catch (error) {
            if (!(error instanceof BrowserHostError)) throw error;
            return this.result(job, startedAt, 'failed', `the login check failed (${error.code}): ${error.message}`, logs);
          }
          logs.push('stderr', `stageflow: login check of ${stage.browser.check.url}: ${login.logged_in ? 'logged in' : 'logged out'}\n`);
        }
      }
      const env = this.processes.environment(stage.env ?? {}, {
        ...session?.env,
        STAGEFLOW_INPUT: paths.input,
        STAGEFLOW_OUTPUT: paths.output,
        STAGEFLOW_RUN_ID: job.runId,
        STAGEFLOW_STAGE_ID: job.stageId,
        STAGEFLOW_ATTEMPT: String(job.attempt),
        ...(login ? { STAGEFLOW_LOGGED_IN: String(login.logged_in) } : {}),
      });
      // Profile stages with allow_domains: agent-browser's navigations are recorded for the soft allowlist audit.
      if (session) recording = this.navigations.record(job, stage, paths, env);
      if (execution.stopped) return this.result(job, startedAt, 'cancelled', 'cancelled before it started', logs);
      const child = this.processes.start({ command: stage.command, cwd: paths.cwd, env });
      execution.process = child;
      child.onOutput((stream, chunk) => {
        logs.push(stream, chunk);
        if (logs.pendingCount >= 100) void flush();
      });
      let recorded: Promise<unknown> = Promise.resolve();
      if (child.pid !== undefined) {
        this.logger.log({ ...ids, pid: child.pid, msg: 'stage process started' });
        // Not awaited before the process runs: a short stage should not wait a round trip.
        recorded = this.attempts
          .recordProcess(job, child.pid, this.processes.startTime(child.pid))
          .then((current) => current || this.stop(execution, 'cancel'))
          .catch((error) => this.logger.warn({ ...ids, msg: `could not record the process: ${(error as Error).message}` }));
      }
      timeout = setTimeout(() => this.stop(execution, 'timeout'), stage.timeoutSeconds * 1000);
      watch = setInterval(() => {
        this.attempts
          .isCurrent(job)
          .then((current) => current || this.stop(execution, 'cancel'))
          .catch(() => undefined);
      }, this.options.watchMs);
      const exit = await child.exited;
      await recorded;
      clearTimeout(timeout);
      clearInterval(watch);
      logs.end();

      if (execution.stopped === 'timeout') {
        return this.result(job, startedAt, 'timed_out', `timed out after ${stage.timeoutSeconds} s`, logs);
      }
      if (execution.stopped === 'cancel') return this.result(job, startedAt, 'cancelled', 'cancelled', logs);
      if (execution.stopped === 'shutdown') {
        return this.result(job, startedAt, 'failed', `interrupted: the runner shut down during attempt ${job.attempt}`, logs);
      }
      if (exit.startError) return this.result(job, startedAt, 'failed', `could not start: ${exit.startError.message}`, logs);
      if (exit.code !== 0) {
        const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
        return this.result(job, startedAt, 'failed', how, logs);
      }
      const verdict = judgeOutput(this.workspace.readOutput(paths.output), stage.outputSchema, this.schemas, login && { ...login });
      if (!verdict.ok) return this.result(job, startedAt, 'failed', verdict.error, logs);
      return this.result(job, startedAt, 'success', undefined, logs, verdict.output);
    } catch (error) {
      logs.end();
      return this.result(job, startedAt, 'failed', `the runner could not run the stage: ${(error as Error).message}`, logs);
    } finally {
      clearTimeout(timeout);
      clearInterval(watch);
      clearInterval(flushTimer);
      // browser-host's watcher also closes it from the stage's end event, should this runner die first.
      if (session) {
        await this.navigations.report(session.sessionId, recording, ids);
        await this.browserHost
          .close(session.sessionId)
          .catch((error) => this.logger.warn({ ...ids, msg: `could not close the stage session: ${(error as Error).message}` }));
      }
      await flush();
      this.executions.delete(execution);
    }
  }

  private stop(execution: Execution, why: StopReason): void {
    if (execution.stopped) return;
    execution.stopped = why;
    const { runId, stageId, attempt } = execution.job;
    this.logger.log({ runId, stageId, attempt, msg: `stopping the stage process (${why})` });
    execution.process?.terminate(this.options.killGraceMs);
  }

  private result(
    job: StageJobPayload,
    startedAt: number,
    state: AttemptResult['state'],
    error: string | undefined,
    logs: LogCollector,
    output: unknown = {},
  ): AttemptResult {
    const envelope: StageEnvelope = {
      ok: state === 'success',
      stage: job.stageId,
      attempt: job.attempt,
      output: state === 'success' ? output : {},
      artifacts: [],
      durationMs: Date.now() - startedAt,
      ...(error ? { error } : {}),
    };
    this.logger.log({ runId: job.runId, stageId: job.stageId, attempt: job.attempt, state, msg: error ?? 'stage succeeded' });
    return { state, envelope, ...(error ? { reason: error } : {}), logTail: logs.tail() };
  }
}

/** What browser-host needs to open the stage's tab: the `browser:` block and, with a profile, the lease's fencing token. */
export function sessionRequest(job: StageJobPayload, stage: RunStageDefinition, grant?: LeaseGrant): OpenStageSessionRequest {
  const browser = stage.browser;
  if (!browser) throw new Error(`stage ${job.stageId} has no browser block`);
  if (browser.profile && grant?.profile !== browser.profile) {
    throw new Error(`stage ${job.stageId} needs the lease on browser profile ${browser.profile} and has none`);
  }
  return {
    runId: job.runId,
    stageId: job.stageId,
    attempt: job.attempt,
    ...(browser.profile && grant ? { profile: browser.profile, leaseToken: grant.token } : {}),
    headed: browser.headed,
    allowDomains: browser.allowDomains,
    ...(browser.check?.url ? { checkUrl: browser.check.url } : {}),
    ...(browser.loginUrl ? { loginUrl: browser.loginUrl } : {}),
  };
}

/** The login-check request for a stage's `browser.check`. */
export function checkRequest(check: BrowserCheck): LoginCheckRequest {
  return {
    url: check.url,
    ...(check.loggedOutUrl !== undefined ? { loggedOutUrl: check.loggedOutUrl } : {}),
    ...(check.selector !== undefined ? { selector: check.selector } : {}),
    ...(check.cookie !== undefined ? { cookie: check.cookie } : {}),
  };
}
