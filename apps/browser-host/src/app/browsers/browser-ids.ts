import { createHash } from 'node:crypto';

function digest(...parts: string[]): string {
  // NUL cannot occur in an id, so ("a.b", "c") and ("a", "b.c") never meet.
  return createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 20);
}

/**
 * The id of the shared browser of a (run, scope, profile): the same on every
 * browser-host and across restarts, one safe segment (it goes into a Chrome switch
 * and a folder name), and free of the profile name so a process list shows no more
 * than it must.
 */
export function sharedBrowserId(runId: string, scope: string, profile: string): string {
  return `sb-${digest('shared', runId, scope, profile)}`;
}

/** The id of the throw-away browser of one stage session. */
export function throwawayBrowserId(sessionId: string): string {
  return `tb-${digest('throwaway', sessionId)}`;
}
