import type { GateStageDefinition, JobStageDefinition, StageDefinition } from './pipeline.model';

/**
 * True for the stages a runner executes as a queue job: `run` and `steps`.
 * They are the ones that are claimed, time out, retry, and take a browser
 * profile's lease. A gate has no job: it waits for the operator.
 */
export function isJobStage(stage: StageDefinition | undefined): stage is JobStageDefinition {
  return stage?.kind === 'run' || stage?.kind === 'steps';
}

/**
 * A human login gate (`kind: gate`, `verify: browser_login`; the loader makes sure
 * it has `browser.profile` and `browser.check`). Unlike a plain gate it is
 * queued as a job: a runner opens the browser the operator signs in on, the
 * gate waits for the operator, and a second job checks the login after Accept.
 */
export function isLoginGate(stage: StageDefinition | undefined): boolean {
  return stage?.kind === 'gate' && stage.verify === 'browser_login';
}

/** The stages that go through the stage queue: job stages and human login gates. They take a browser profile's lease. */
export function isQueuedStage(stage: StageDefinition | undefined): stage is QueuedStageDefinition {
  return isJobStage(stage) || isLoginGate(stage);
}

/** A stage {@link isQueuedStage} accepts. */
export type QueuedStageDefinition = JobStageDefinition | GateStageDefinition;
