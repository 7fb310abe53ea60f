/** What a redacted value was, as far as the pattern that caught it can tell. */
export type RedactionKind =
  | 'private_key'
  | 'jwt'
  | 'github_token'
  | 'gitlab_token'
  | 'slack_token'
  | 'slack_webhook'
  | 'aws_access_key_id'
  | 'google_api_key'
  | 'stripe_key'
  | 'api_key'
  | 'npm_token'
  | 'sendgrid_key'
  | 'huggingface_token'
  | 'bearer'
  | 'basic_auth'
  | 'authorization'
  | 'cookie'
  | 'session'
  | 'password'
  | 'secret'
  | 'token'
  | 'csrf'
  | 'signature'
  | 'credentials'
  | 'storage';

/** `[redacted:<kind>]`, what replaces a secret. */
export function redactionMarker(kind: RedactionKind): string {
  return `[redacted:${kind}]`;
}

/** Source of a marker, for patterns that must treat one as a single, already-redacted value. */
export const MARKER_SOURCE = '\\[redacted:[a-z_]+\\]';

const MARKER_ONLY = new RegExp(`^(?:${MARKER_SOURCE})$`);

/** True for `[redacted:kind]`: the value was redacted before, leave it so redaction is idempotent. */
export function isMarker(value: string): boolean {
  return MARKER_ONLY.test(value);
}
