/**
 * Content types served for artifacts, by extension. Deliberately short: a
 * type a browser would render as active content from the api's own origin
 * (HTML, SVG, JavaScript) is not here and is served as a download of
 * `application/octet-stream`.
 */
const BY_EXTENSION: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  pdf: 'application/pdf',
  txt: 'text/plain; charset=utf-8',
  log: 'text/plain; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  json: 'application/json',
  har: 'application/json',
  zip: 'application/zip',
  gz: 'application/gzip',
  tgz: 'application/gzip',
};

export const FALLBACK_CONTENT_TYPE = 'application/octet-stream';

/** The content type for an artifact name (by its last extension, case-insensitive). */
export function contentTypeOf(name: string): string {
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return FALLBACK_CONTENT_TYPE;
  const extension = name.slice(dot + 1).toLowerCase();
  return Object.hasOwn(BY_EXTENSION, extension) ? BY_EXTENSION[extension] : FALLBACK_CONTENT_TYPE;
}
