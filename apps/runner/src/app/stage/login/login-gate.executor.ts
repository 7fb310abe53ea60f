import { Injectable, Logger } from '@nestjs/common';
import { liveViewPath, type StageEnvelope, type StageJobPayload, type StageSession } from '@stageflow/contracts';
import { AttemptResult, Claim, SchemaCheck, StageAttempts } from '@stageflow/engine';
import type { LeaseGrant } from '@stageflow/leases';
import type { GateStageDefinition } from '@stageflow/pipeline';
import { BrowserHostClient, BrowserHostError } from '../browser-host.client';
import { checkRequest, sessionRequest } from '../stage-executor.service';
import { judgeValue } from '../stage-output';

type Runnable = Extract<Claim, { outcome: 'run' }>;

/**
 * A human login gate (`kind: gate`, `verify: browser_login`) as two jobs:
 *
 * 1. **open**: asks browser-host for a session the operator can see (its tab at
 *    `login_url` or `check.url`; `local_window` or `live_view`), then records the
 *    gate as waiting with that hand-off. The session stays open while the gate
 *    waits (browser-host closes it when the stage ends, whatever ends it).
 * 2. **verify** (after Accept): runs `browser.check` in the same tab. Logged in →
 *    the stage succeeds with `{logged_in, url}`. Still logged out → the stage runs
 *    again with a new gate (a new attempt).
 *
 * Reject is answered by the engine directly (the stage fails). See
 * docs/browser-sessions.md, "Human login gate".
 */
@Injectable()
export class LoginGateExecutor {
  private readonly logger = new Logger('LoginGate');

  constructor(
    private readonly attempts: StageAttempts,
    private readonly browserHost: BrowserHostClient,
    private readonly schemas: SchemaCheck,
  ) {}

  async run(job: StageJobPayload, claim: Runnable, grant?: LeaseGrant): Promise<void> {
    const stage = claim.stage as GateStageDefinition;
    const ids = { runId: job.runId, stageId: job.stageId, attempt: job.attempt };
    const startedAt = Date.now();
    const check = stage.browser?.check;
    if (!stage.browser?.profile || !check) {
      // The loader refuses this (invalid_verify); a hand-made run record could still hold it.
      await this.attempts.finish(job, this.failed(job, startedAt, 'a login gate needs browser.profile and browser.check'));
      return;
    }
    let session: StageSession;
    try {
      session = await this.browserHost.open({ ...sessionRequest(job, stage, grant), login: true });
    } catch (error) {
      if (!(error instanceof BrowserHostError)) throw error;
      // login_needs_screen carries the spec's sentence: it is the stage's reason as is.
      const reason = error.code === 'login_needs_screen' ? error.message : `browser-host refused the login session (${error.code}): ${error.message}`;
      await this.attempts.finish(job, this.failed(job, startedAt, reason));
      return;
    }

    if (claim.gate?.answer?.decision !== 'accept') {
      const url = stage.browser.loginUrl ?? check.url;
      const login = { handoff: session.handoff ?? 'live_view', livePath: liveViewPath(job.runId, job.stageId), url };
      const opened = await this.attempts.openLoginGate(job, stage.message, login);
      this.logger.log({ ...ids, handoff: login.handoff, msg: opened === 'opened' ? 'login gate waits for the operator' : 'login gate was no longer running' });
      if (opened === 'stale') await this.close(session, ids);
      return;
    }

    // After Accept: the Host checks the login itself (verify: browser_login).
    let result: { logged_in: boolean; url: string };
    try {
      result = await this.browserHost.check(session.sessionId, checkRequest(check));
    } catch (error) {
      if (!(error instanceof BrowserHostError)) throw error;
      await this.close(session, ids);
      await this.attempts.finish(job, this.failed(job, startedAt, `the login check after Accept failed (${error.code}): ${error.message}`));
      return;
    }
    await this.close(session, ids);
    if (!result.logged_in) {
      const reason = `still logged out after Accept (the check page ended at ${result.url}); the login gate opens again`;
      this.logger.log({ ...ids, msg: reason });
      await this.attempts.repeatLoginGate(job, reason);
      return;
    }
    const decision = { decision: 'accept', ...(claim.gate.answer.note !== undefined ? { note: claim.gate.answer.note } : {}) };
    const verdict = judgeValue({ ...decision, ...result }, stage.outputSchema, this.schemas);
    const envelope: StageEnvelope = {
      ok: verdict.ok,
      stage: job.stageId,
      attempt: job.attempt,
      output: verdict.ok ? verdict.output : {},
      artifacts: [],
      durationMs: Date.now() - startedAt,
      ...(verdict.ok ? {} : { error: verdict.error }),
    };
    await this.attempts.finish(job, verdict.ok ? { state: 'success', envelope } : { state: 'failed', envelope, reason: verdict.error });
  }

  private failed(job: StageJobPayload, startedAt: number, reason: string): AttemptResult {
    const envelope: StageEnvelope = {
      ok: false,
      stage: job.stageId,
      attempt: job.attempt,
      output: {},
      artifacts: [],
      durationMs: Date.now() - startedAt,
      error: reason,
    };
    return { state: 'failed', envelope, reason };
  }

  private async close(session: StageSession, ids: Record<string, unknown>): Promise<void> {
    await this.browserHost
      .close(session.sessionId)
      .catch((error) => this.logger.warn({ ...ids, msg: `could not close the login session: ${(error as Error).message}` }));
  }
}
