import { StageflowError } from '@stageflow/contracts';
import type { PipelineDiagnostic } from './pipeline-diagnostic';

/** Thrown by `loadPipelineOrThrow`; `details` carries every diagnostic. */
export class PipelineInvalidError extends StageflowError {
  declare readonly details: {
    errors: PipelineDiagnostic[];
    warnings: PipelineDiagnostic[];
  };

  constructor(errors: PipelineDiagnostic[], warnings: PipelineDiagnostic[]) {
    const first = errors[0];
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
    super(
      'pipeline_invalid',
      first
        ? `${first.file}:${first.line}:${first.column}: ${first.message}${more}`
        : 'The pipeline is invalid.',
      422,
      { errors, warnings },
    );
    this.name = 'PipelineInvalidError';
  }
}
