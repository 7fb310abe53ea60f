function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length];
}

/** `dialogTimeoutSeconds`, `Launch-Args` → `dialog_timeout_seconds`, `launch_args`. */
function normalize(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[-\s]+/g, '_');
}

/** The candidate closest to `key` (typo, case or camelCase away), if any is close enough. */
export function didYouMean(key: string, candidates: readonly string[]): string | undefined {
  const wanted = normalize(key);
  let best: { candidate: string; d: number } | undefined;
  for (const candidate of candidates) {
    const d = distance(wanted, candidate);
    if (!best || d < best.d) best = { candidate, d };
  }
  const allowed = wanted.length <= 4 ? 1 : 2;
  return best && best.d <= allowed ? best.candidate : undefined;
}
