import { redactionMarker } from './redaction-marker';
import { redactText } from './redact-text';
import { secretKindOfName } from './secret-names';

/** Deeper than this is cut off; no envelope or activity record nests that far. */
const MAX_DEPTH = 64;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function looksLikeCookie(obj: Record<string, unknown>): boolean {
  return (
    typeof obj['name'] === 'string' &&
    'value' in obj &&
    ['domain', 'path', 'httpOnly', 'secure', 'sameSite', 'expires', 'session'].some((k) => k in obj)
  );
}

function walk(value: unknown, depth: number, seen: WeakSet<object>): Json | undefined {
  switch (typeof value) {
    case 'string':
      return redactText(value);
    case 'number':
      // JSON has no NaN, Infinity or -0.
      return Number.isFinite(value) ? value + 0 : null;
    case 'boolean':
      return value;
    case 'bigint':
      return value.toString();
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  if (value === null) return null;
  const obj = value as object;
  if (depth >= MAX_DEPTH) return '[truncated]';
  if (seen.has(obj)) return '[circular]';
  seen.add(obj);
  try {
    // Before toJSON: a Buffer's toJSON would spell its bytes out.
    if (ArrayBuffer.isView(obj) || obj instanceof ArrayBuffer) return '[binary]';
    if (typeof (obj as { toJSON?: unknown }).toJSON === 'function') {
      return walk((obj as { toJSON: () => unknown }).toJSON(), depth + 1, seen);
    }
    if (obj instanceof Error) return { name: redactText(obj.name), message: redactText(obj.message) };
    if (Array.isArray(obj)) return obj.map((item) => walk(item, depth + 1, seen) ?? null);
    const entries: [string, unknown][] =
      obj instanceof Map ? [...obj.entries()].map(([k, v]) => [String(k), v]) : Object.entries(obj);
    const cookie = !(obj instanceof Map) && looksLikeCookie(obj as Record<string, unknown>);
    const out: { [key: string]: Json } = {};
    for (const [key, v] of entries) {
      const kind = cookie && key === 'value' ? 'cookie' : secretKindOfName(key);
      if (kind && v !== null && v !== undefined && typeof v !== 'boolean' && v !== '') {
        out[key] = redactionMarker(kind);
        continue;
      }
      const walked = walk(v, depth + 1, seen);
      if (walked !== undefined) out[key] = walked;
    }
    return out;
  } catch {
    // A throwing getter or toJSON must not take the log line with it.
    return '[unreadable]';
  } finally {
    seen.delete(obj);
  }
}

/**
 * Deep, JSON-safe copy of a value for logs, activity and envelopes: values
 * under secret-looking keys (`cookie`, `set-cookie`, `authorization`,
 * `password`, `token`, `secret`, `session`, `api_key`, `accessToken`...) become
 * `[redacted:<kind>]`, cookie objects (`{name, value, domain...}`) lose their
 * value, and every string goes through {@link redactText}.
 *
 * The result is plain JSON: `undefined` and functions are dropped (or `null`
 * in arrays), bigints become strings, Dates their ISO text, Maps objects,
 * cycles `"[circular]"`. Keys themselves are kept as they are. Never throws.
 */
export function redactValue(value: unknown): unknown {
  return walk(value, 0, new WeakSet()) ?? null;
}
