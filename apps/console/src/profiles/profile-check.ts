import { ApiError } from '../api/api-client';
import type { ProfileCheckView } from '../api/api.types';

/** What the "Last check" cell of a profile says; pure, so it is unit-tested without a DOM. */
export interface CheckCell {
  /** `logged_in`, `logged_out`, `never`, `checking` or `failed`: a CSS hook and what a test reads. */
  state: 'logged_in' | 'logged_out' | 'never' | 'checking' | 'failed';
  text: string;
  /** The page the check ended on, for a tooltip. */
  url?: string;
  /** When it was checked (ISO), shown in the operator's locale. */
  at?: string;
}

/** The state of "Check now" on one profile while this page is open. */
export type CheckProgress = { running: true } | { running: false; error: string };

/** The cell from the profile's stored last check and what this page is doing about it. */
export function checkCell(last: ProfileCheckView | undefined, progress?: CheckProgress): CheckCell {
  if (progress?.running) return { state: 'checking', text: 'checking…' };
  if (progress && !progress.running) return { state: 'failed', text: progress.error };
  if (!last) return { state: 'never', text: 'never checked' };
  return last.loggedIn
    ? { state: 'logged_in', text: 'logged in', url: last.url, at: last.checkedAt }
    : { state: 'logged_out', text: 'logged out', url: last.url, at: last.checkedAt };
}

/**
 * The message a failed check leaves in the row: the api's own words (they say
 * what to do), with its code so an operator can look it up.
 */
export function checkFailure(error: unknown): string {
  if (error instanceof ApiError) return `${error.message} (${error.code})`;
  return error instanceof Error ? error.message : String(error);
}
