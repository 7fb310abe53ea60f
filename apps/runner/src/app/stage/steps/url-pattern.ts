/**
 * `wait_for: {url}` matching: a pattern without `*` matches when the URL
 * contains it; with `*`, the whole URL must match, each `*` standing for any
 * run of characters (`http://*.test/account*`). The same reading as
 * `browser.check.logged_out_url`.
 */
export function urlMatches(pattern: string, url: string): boolean {
  if (!pattern.includes('*')) return url.includes(pattern);
  const parts = pattern.split('*');
  const first = parts[0];
  const last = parts[parts.length - 1];
  if (!url.startsWith(first)) return false;
  let at = first.length;
  for (const part of parts.slice(1, -1)) {
    const found = url.indexOf(part, at);
    if (found === -1) return false;
    at = found + part.length;
  }
  return url.length - last.length >= at && url.endsWith(last);
}
