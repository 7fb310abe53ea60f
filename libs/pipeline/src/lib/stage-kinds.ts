import type { JobStageDefinition, StageDefinition } from './pipeline.model';

/**
 * True for the stages a runner executes as a queue job: `run` and `steps`.
 * They are the ones that are claimed, time out, retry, and take a browser
 * profile's lease. A gate has no job: it waits for the operator.
 */
export function isJobStage(stage: StageDefinition | undefined): stage is JobStageDefinition {
  return stage?.kind === 'run' || stage?.kind === 'steps';
}
