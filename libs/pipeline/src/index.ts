// Public API of @stageflow/pipeline: the pipeline model, the YAML loader and
// the `if` language. Everything else under lib/ is internal.
export type {
  BrowserBlock,
  BrowserCheck,
  ConditionAst,
  EdgeDefinition,
  ClickStep,
  ExtractStep,
  FillStep,
  GateStageDefinition,
  GotoStep,
  JobStageDefinition,
  JsonSchema,
  Pipeline,
  PressStep,
  RunStageDefinition,
  ScreenshotStep,
  StageDefinition,
  StageKind,
  StepAction,
  StepsStageDefinition,
  WaitForStep,
} from './lib/pipeline.model';
export { isJobStage, isLoginGate, isQueuedStage, type QueuedStageDefinition } from './lib/stage-kinds';
export {
  PRESS_KEYS,
  STEP_DEFAULT_TIMEOUT_SECONDS,
  type PressKeyName,
  type StepActionName,
} from './lib/pipeline-format';
export type {
  LoadPipelineOptions,
  PipelineDiagnostic,
  PipelineDiagnosticCode,
  PipelineLoadResult,
} from './lib/pipeline-diagnostic';
export {
  loadPipeline,
  loadPipelineOrThrow,
} from './lib/loader/pipeline.loader';
export { PipelineInvalidError } from './lib/pipeline-invalid.error';
export { parseCondition } from './lib/condition/condition.parser';
export {
  evaluateCondition,
  type ConditionScope,
} from './lib/condition/condition.evaluator';
export { ConditionSyntaxError } from './lib/condition/condition-syntax.error';
export { PIPELINE_JSON_SCHEMA } from './lib/pipeline.schema';
