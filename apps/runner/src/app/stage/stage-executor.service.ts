import { Inject, Injectable, Logger } from '@nestjs/common';
import { ArtifactStore } from '@stageflow/artifacts';
import type { LoginCheckRequest, LoginCheckResult, OpenStageSessionRequest, StageEnvelope, StageJobPayload, StageSession } from '@stageflow/contracts';
import { AttemptResult, Claim, SchemaCheck, StageAttempts } from '@stageflow/engine';
import type { LeaseGrant } from '@stageflow/leases';
import type { BrowserCheck, JobStageDefinition, QueuedStageDefinition, RunStageDefinition, StepsStageDefinition } from '@stageflow/pipeline';
import { RUNNER_OPTIONS } from '../runner.tokens';
import { BrowserHostClient, BrowserHostError } from './browser-host.client';
import type { ResolvedRunnerOptions } from '../runner.options';
import { type NavigationRecording, StageNavigations } from './activity/stage-navigations.service';
import { LogCollector } from './log-collector';
import { addHostFields, judgeOutput, judgeValue } from './stage-output';
import { StageProcess, StageProcessAdapter } from './stage-process.adapter';
import { StageRedaction, stageRedaction } from './stage-redaction';
import { StageWorkspace } from './stage-workspace.adapter';
import { StepsExecutor } from './steps/steps.executor';

/** A claimed job stage (run or steps); human login gates go to the LoginGateExecutor. */
type Runnable = Extract<Claim, { outcome: 'run' }> & { stage: JobStageDefinition };

/** Why the runner stopped a process itself. */
type StopReason = 'timeout' | 'cancel' | 'shutdown';

interface Execution {
  job: StageJobPayload;
  /** Aborted by stop(): ends a steps stage's current step. */
  abort: AbortController;
  process?: StageProcess;
  stopped?: StopReason;
  /** A run stage's agent-browser navigations, for the soft allowlist audit. */
  recording?: NavigationRecording;
}

/** How the body of an attempt (a command, or steps) ended, before timeouts and cancels are judged. */
type BodyOutcome =
  | { ok: true; output: unknown; artifacts: string[] }
  | { ok: false; error: string; artifacts: string[] };

/**
 * Runs one attempt of a job stage: the stage session of a browser stage,
 * bounded logs, timeout, cancel, output schema, artifacts, envelope. The body
 * depends on the kind: a `run` stage's process group (input and output files,
 * `STAGEFLOW_ARTIFACTS_DIR`), or a `steps` stage's actions on its tab
 * ({@link StepsExecutor}). Knows the attempts it runs, so a cancel (or
 * shutdown) can stop them.
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
    private readonly artifacts: ArtifactStore,
    private readonly steps: StepsExecutor,
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
    const execution: Execution = { job, abort: new AbortController() };
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
    const onOutput = (stream: 'stdout' | 'stderr', chunk: Buffer | string) => {
      logs.push(stream, chunk);
      if (logs.pendingCount >= 100) void flush();
    };
    const flushTimer = setInterval(() => void flush(), this.options.logFlushMs);
    let timeout: NodeJS.Timeout | undefined;
    let watch: NodeJS.Timeout | undefined;
    let session: StageSession | undefined;
    let login: LoginCheckResult | undefined;
    const end = (state: AttemptResult['state'], error: string | undefined, output?: unknown, artifacts: string[] = []) =>
      this.result(job, startedAt, state, error, logs, output, artifacts);
    try {
      if (stage.browser && this.options.browserSessions) {
        try {
          session = await this.browserHost.open(sessionRequest(job, stage, grant));
        } catch (error) {
          if (!(error instanceof BrowserHostError)) throw error;
          return end('failed', `browser-host refused the stage session (${error.code}): ${error.message}`);
        }
        this.logger.log({ ...ids, profile: stage.browser.profile, browserId: session.browserId, msg: 'stage session opened' });
        if (session.restarted && stage.browser.profile && !stage.browser.check) {
          // The run's browser had crashed: cookies it set just before may be gone. Re-verify the login.
          const lost = await this.reverifyLogin(job, stage.browser.profile, session, logs);
          if (lost) return end('failed', lost);
        }
        if (stage.browser.check) {
          try {
            login = await this.browserHost.check(session.sessionId, checkRequest(stage.browser.check));
          } catch (error) {
            if (!(error instanceof BrowserHostError)) throw error;
            return end('failed', `the login check failed (${error.code}): ${error.message}`);
          }
          logs.push('stderr', `stageflow: login check of ${stage.browser.check.url}: ${login.logged_in ? 'logged in' : 'logged out'}\n`);
        }
      }
      if (execution.stopped) return end('cancelled', 'cancelled before it started');
      timeout = setTimeout(() => this.stop(execution, 'timeout'), stage.timeoutSeconds * 1000);
      watch = setInterval(() => {
        this.attempts
          .isCurrent(job)
          .then((current) => current || this.stop(execution, 'cancel'))
          .catch(() => undefined);
      }, this.options.watchMs);

      let body: BodyOutcome;
      if (stage.kind === 'steps') {
        if (!session) {
          return end('failed', 'a steps stage needs a browser session, and this runner was started without browser sessions');
        }
        const line = (text: string) => onOutput('stdout', `${text}\n`);
        body = await this.runSteps(job, stage, session, execution, line);
      } else {
        const hostEnv: Record<string, string> = login ? { STAGEFLOW_LOGGED_IN: String(login.logged_in) } : {};
        body = await this.runCommand(job, claim.input, stage, session, execution, onOutput, hostEnv);
      }
      clearTimeout(timeout);
      clearInterval(watch);
      logs.end();

      if (execution.stopped === 'timeout') {
        return end('timed_out', `timed out after ${stage.timeoutSeconds} s`, undefined, body.artifacts);
      }
      if (execution.stopped === 'cancel') return end('cancelled', 'cancelled', undefined, body.artifacts);
      if (execution.stopped === 'shutdown') {
        return end('failed', `interrupted: the runner shut down during attempt ${job.attempt}`, undefined, body.artifacts);
      }
      if (!body.ok) return end('failed', body.error, undefined, body.artifacts);
      // A login check's {logged_in, url} go over the stage's own output, before the schema.
      const output = login ? addHostFields(body.output, { ...login }) : { ok: true as const, output: body.output };
      if (!output.ok) return end('failed', output.error, undefined, body.artifacts);
      const verdict = judgeValue(output.output, stage.outputSchema, this.schemas);
      if (!verdict.ok) return end('failed', verdict.error, undefined, body.artifacts);
      return end('success', undefined, verdict.output, body.artifacts);
    } catch (error) {
      logs.end();
      return end('failed', `the runner could not run the stage: ${(error as Error).message}`);
    } finally {
      clearTimeout(timeout);
      clearInterval(watch);
      clearInterval(flushTimer);
      // browser-host's watcher also closes it from the stage's end event, should this runner die first.
      if (session) {
        await this.navigations.report(session.sessionId, execution.recording, ids);
        await this.browserHost
          .close(session.sessionId)
          .catch((error) => this.logger.warn({ ...ids, msg: `could not close the stage session: ${(error as Error).message}` }));
      }
      await flush();
      this.executions.delete(execution);
    }
  }

  /**
   * A `run` stage's body: its process group with the input, output and
   * artifacts folder, then what it left (output file, artifacts). A file in
   * the artifacts folder that cannot be an artifact fails a successful attempt,
   * so its author hears of it rather than losing it silently.
   */
  private async runCommand(
    job: StageJobPayload,
    input: unknown,
    stage: RunStageDefinition,
    session: StageSession | undefined,
    execution: Execution,
    onOutput: (stream: 'stdout' | 'stderr', chunk: Buffer | string) => void,
    hostEnv: Record<string, string>,
  ): Promise<BodyOutcome> {
    const ids = { runId: job.runId, stageId: job.stageId, attempt: job.attempt };
    const paths = this.workspace.prepare(job, stage.cwd);
    this.workspace.writeInput(paths.input, input);
    const artifactsDir = this.artifacts.attemptDir(job);
    const env = this.processes.environment(stage.env ?? {}, {
      ...session?.env,
      STAGEFLOW_INPUT: paths.input,
      STAGEFLOW_OUTPUT: paths.output,
      STAGEFLOW_ARTIFACTS_DIR: artifactsDir,
      STAGEFLOW_RUN_ID: job.runId,
      STAGEFLOW_STAGE_ID: job.stageId,
      STAGEFLOW_ATTEMPT: String(job.attempt),
      ...hostEnv,
    });
    // Profile stages with allow_domains: agent-browser's navigations are recorded for the soft allowlist audit.
    if (session) execution.recording = this.navigations.record(job, stage, paths, env);
    if (execution.stopped) return { ok: false, error: 'stopped before it started', artifacts: [] };
    const child = this.processes.start({ command: stage.command, cwd: paths.cwd, env });
    execution.process = child;
    child.onOutput(onOutput);
    let recorded: Promise<unknown> = Promise.resolve();
    if (child.pid !== undefined) {
      this.logger.log({ ...ids, pid: child.pid, msg: 'stage process started' });
      // Not awaited before the process runs: a short stage should not wait a round trip.
      recorded = this.attempts
        .recordProcess(job, child.pid, this.processes.startTime(child.pid))
        .then((current) => current || this.stop(execution, 'cancel'))
        .catch((error) => this.logger.warn({ ...ids, msg: `could not record the process: ${(error as Error).message}` }));
    }
    const exit = await child.exited;
    await recorded;
    const { artifacts, rejected } = await this.artifacts.collect(job);
    const names = artifacts.map((a) => a.name);
    for (const r of rejected) onOutput('stderr', `[stageflow] removed "${r.name}" from the artifacts folder: ${r.problem}\n`);
    if (exit.startError) return { ok: false, error: `could not start: ${exit.startError.message}`, artifacts: names };
    if (exit.code !== 0) {
      const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
      return { ok: false, error: how, artifacts: names };
    }
    if (rejected.length) {
      const list = rejected.map((r) => `"${r.name}" (${r.problem})`).join('; ');
      return { ok: false, error: `$STAGEFLOW_ARTIFACTS_DIR held what cannot be an artifact (removed): ${list}`, artifacts: names };
    }
    const verdict = judgeOutput(this.workspace.readOutput(paths.output), undefined, this.schemas);
    return verdict.ok ? { ok: true, output: verdict.output, artifacts: names } : { ok: false, error: verdict.error, artifacts: names };
  }

  /**
   * After a restart of the run's browser: runs the run's login check for the profile (if
   * it has one) in the stage's tab. Returns the stage's failure reason when the profile
   * is now logged out, so the stage does not work on a login that is gone.
   */
  private async reverifyLogin(job: StageJobPayload, profile: string, session: StageSession, logs: LogCollector): Promise<string | undefined> {
    const check = await this.attempts.loginCheckFor(job.runId, profile);
    if (!check) {
      logs.push('stderr', `stageflow: the browser of profile ${profile} was restarted; this run has no browser.check to re-verify the login with\n`);
      return undefined;
    }
    let result: LoginCheckResult;
    try {
      result = await this.browserHost.check(session.sessionId, checkRequest(check));
    } catch (error) {
      if (!(error instanceof BrowserHostError)) throw error;
      return `the browser of profile ${profile} was restarted and its login could not be re-verified (${error.code}): ${error.message}`;
    }
    logs.push('stderr', `stageflow: the browser of profile ${profile} was restarted; login re-verified at ${check.url}: ${result.logged_in ? 'logged in' : 'logged out'}\n`);
    if (result.logged_in) return undefined;
    return `the browser of profile ${profile} crashed and was restarted, and the login is gone (the check page ended at ${result.url}); run the pipeline again to log in`;
  }

  /** A `steps` stage's body: its actions on the session's tab, one log line each. */
  private async runSteps(
    job: StageJobPayload,
    stage: StepsStageDefinition,
    session: StageSession,
    execution: Execution,
    log: (line: string) => void,
  ): Promise<BodyOutcome> {
    return this.steps.run({ job, stage, session, signal: execution.abort.signal, log });
  }

  private stop(execution: Execution, why: StopReason): void {
    if (execution.stopped) return;
    execution.stopped = why;
    const { runId, stageId, attempt } = execution.job;
    this.logger.log({ runId, stageId, attempt, msg: `stopping the stage (${why})` });
    execution.abort.abort();
    execution.process?.terminate(this.options.killGraceMs);
  }

  private result(
    job: StageJobPayload,
    startedAt: number,
    state: AttemptResult['state'],
    error: string | undefined,
    logs: LogCollector,
    output: unknown = {},
    artifacts: string[] = [],
  ): AttemptResult {
    const envelope: StageEnvelope = {
      ok: state === 'success',
      stage: job.stageId,
      attempt: job.attempt,
      output: state === 'success' ? output : {},
      artifacts,
      durationMs: Date.now() - startedAt,
      ...(error ? { error } : {}),
    };
    this.logger.log({ runId: job.runId, stageId: job.stageId, attempt: job.attempt, state, msg: error ?? 'stage succeeded' });
    return { state, envelope, ...(error ? { reason: error } : {}), logTail: logs.tail() };
  }
}

/** What browser-host needs to open the stage's tab: the `browser:` block and, with a profile, the lease's fencing token. */
export function sessionRequest(job: StageJobPayload, stage: QueuedStageDefinition, grant?: LeaseGrant): OpenStageSessionRequest {
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
