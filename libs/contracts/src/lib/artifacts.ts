/**
 * Artifacts: files a stage attempt leaves behind (screenshots of a `steps`
 * stage, files a `run` stage writes to `$STAGEFLOW_ARTIFACTS_DIR`). The name
 * rule lives here because four places must agree on it: the pipeline loader
 * (screenshot names), the artifact store, the runner and the api's routes.
 */

/** Longest artifact name, in characters. */
export const ARTIFACT_NAME_MAX_LENGTH = 128;

/**
 * One safe file name: a letter or digit first, then letters, digits, `.`, `_`
 * and `-`; no `..` anywhere. Never a path, never hidden (temp files of an
 * atomic write start with a dot, so they can never be listed or served).
 */
export const ARTIFACT_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$';

const NAME = new RegExp(ARTIFACT_NAME_PATTERN);

/** Why `name` is not an artifact name, in words, or `undefined` when it is one. */
export function artifactNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return 'it is not a string';
  if (name === '') return 'it is empty';
  if (name.includes('\u0000')) return 'it contains a NUL character';
  if (name.includes('/') || name.includes('\\')) return 'it contains a path separator';
  if (name.includes('..')) return 'it contains ".."';
  if (name.length > ARTIFACT_NAME_MAX_LENGTH) {
    return `it is ${name.length} characters long (at most ${ARTIFACT_NAME_MAX_LENGTH})`;
  }
  if (!NAME.test(name)) return 'it must start with a letter or digit and use only letters, digits, ".", "_" and "-"';
  return undefined;
}

/** Where an artifact belongs: one attempt of one stage of one run. */
export interface ArtifactOwner {
  runId: string;
  stageId: string;
  attempt: number;
}
