// Public API of @stageflow/artifacts: the store and its errors. Paths stay inside.
export {
  ArtifactStore,
  DEFAULT_ARTIFACT_MAX_BYTES,
  assertArtifactName,
  type ArtifactInfo,
  type ArtifactStoreOptions,
  type OpenedArtifact,
  type RejectedArtifact,
} from './lib/artifact.store';
export {
  ArtifactFolderUnsafeError,
  ArtifactNameError, ArtifactNotFoundError, ArtifactOwnerError, ArtifactTooLargeError } from './lib/artifact.errors';
export { contentTypeOf, FALLBACK_CONTENT_TYPE } from './lib/content-type';
