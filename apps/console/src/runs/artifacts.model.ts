/**
 * One artifact as `GET /api/runs/:run/artifacts` lists it (names and
 * numbers, never a path). Written against the artifacts routes being added to
 * the api; the answer is read leniently (an array, or `{items}`) and each
 * entry checked, so a small difference shows fewer details instead of breaking.
 */
export interface ArtifactEntry {
  stageId: string;
  attempt: number;
  name: string;
  sizeBytes?: number;
  contentType?: string;
  modifiedAt?: string;
}

export function parseArtifactList(value: unknown): ArtifactEntry[] | undefined {
  const items = Array.isArray(value) ? value : isObject(value) && Array.isArray(value['items']) ? value['items'] : undefined;
  if (!items) return undefined;
  const entries: ArtifactEntry[] = [];
  for (const item of items) {
    if (!isObject(item)) continue;
    const { stageId, attempt, name, sizeBytes, contentType, modifiedAt } = item;
    if (typeof stageId !== 'string' || typeof name !== 'string' || typeof attempt !== 'number' || !Number.isInteger(attempt) || attempt < 1) continue;
    entries.push({
      stageId,
      attempt,
      name,
      ...(typeof sizeBytes === 'number' ? { sizeBytes } : {}),
      ...(typeof contentType === 'string' ? { contentType } : {}),
      ...(typeof modifiedAt === 'string' ? { modifiedAt } : {}),
    });
  }
  return entries.sort((a, b) => (a.stageId === b.stageId ? (a.attempt === b.attempt ? a.name.localeCompare(b.name) : a.attempt - b.attempt) : a.stageId.localeCompare(b.stageId)));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
