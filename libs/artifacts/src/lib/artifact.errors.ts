import { ARTIFACT_NAME_PATTERN, NotFoundError, StageflowError, type ArtifactOwner } from '@stageflow/contracts';

/** 400 `artifact_name_invalid`: the name is not one safe file name. The message never holds a path. */
export class ArtifactNameError extends StageflowError {
  constructor(name: string, problem: string) {
    super(
      'artifact_name_invalid',
      `${JSON.stringify(name.slice(0, 200))} is not an artifact name: ${problem}. An artifact name is one file name matching ${ARTIFACT_NAME_PATTERN} (for example shot.png), never a path.`,
      400,
      { problem },
    );
    this.name = 'ArtifactNameError';
  }
}

/** 400 `artifact_owner_invalid`: the run id, stage id or attempt cannot name an attempt's folder. */
export class ArtifactOwnerError extends StageflowError {
  constructor(problem: string) {
    super(
      'artifact_owner_invalid',
      `Artifacts belong to one attempt of one stage of one run, and ${problem}. Run and stage ids are 1 to 128 letters, digits, "_" or "-"; attempts count from 1.`,
      400,
      { problem },
    );
    this.name = 'ArtifactOwnerError';
  }
}

/** 413 `artifact_too_large`: over the store's per-artifact cap. */
export class ArtifactTooLargeError extends StageflowError {
  constructor(name: string, sizeBytes: number, maxBytes: number) {
    super(
      'artifact_too_large',
      `Artifact "${name}" is ${sizeBytes} bytes; the limit is ${maxBytes} bytes per artifact. Make it smaller (a viewport screenshot instead of a full page, a compressed file), or raise STAGEFLOW_ARTIFACT_MAX_BYTES on the runner.`,
      413,
      { sizeBytes, maxBytes },
    );
    this.name = 'ArtifactTooLargeError';
  }
}

/** 404 `artifact_not_found`: no such artifact (also for anything at its place that is not a plain file). */
export class ArtifactNotFoundError extends NotFoundError {
  constructor(runId: string, stageId: string, attempt: number, name: string) {
    super(
      'artifact_not_found',
      `Run ${runId} has no artifact "${name}" from attempt ${attempt} of stage "${stageId}". List the run's artifacts to see which exist.`,
      { runId, stageId, attempt, name },
    );
    this.name = 'ArtifactNotFoundError';
  }
}

/** 500 `artifact_folder_unsafe`: a link or a file sits where an attempt's folder belongs; nothing is written through it. */
export class ArtifactFolderUnsafeError extends StageflowError {
  constructor(owner: ArtifactOwner) {
    super(
      'artifact_folder_unsafe',
      `The artifact folder of attempt ${owner.attempt} of stage "${owner.stageId}" in run ${owner.runId} is not a plain folder (a link or a file is in its place), so nothing is written there. Remove what is in its place under the artifacts root.`,
      500,
    );
    this.name = 'ArtifactFolderUnsafeError';
  }
}
