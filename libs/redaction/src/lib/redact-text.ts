import { REDACTION_RULES, RedactionRule } from './redaction-rules';

type Replacer = (substring: string, ...args: unknown[]) => string;

/** `String.replace`, except that a left-alone match resumes scanning at its value (see {@link RedactionRule.rescanGroup}). */
function applyRescanning(text: string, rule: RedactionRule, group: number): string {
  const { pattern } = rule;
  pattern.lastIndex = 0;
  let out = '';
  let copied = 0;
  for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
    const replacement = rule.replace(m[0], ...m.slice(1));
    if (replacement === m[0]) {
      // Not a secret: look inside its value when it is a quoted string (JSON in
      // JSON). Bare values are not rescanned: that would make "a:a:a:..."
      // quadratic. The prefix (key and separator) is never empty, so this advances.
      const value = m[group] ?? '';
      if (/^\\?["']/.test(value)) pattern.lastIndex = m.index + m[0].length - value.length;
      continue;
    }
    out += text.slice(copied, m.index) + replacement;
    copied = m.index + m[0].length;
  }
  return out + text.slice(copied);
}

/** Enough for any real log; garbage that would need more rounds stops here. */
const MAX_ROUNDS = 8;

function redactOnce(text: string): string {
  let out = text;
  for (const rule of REDACTION_RULES) {
    if (rule.rescanGroup !== undefined) {
      out = applyRescanning(out, rule, rule.rescanGroup);
    } else {
      rule.pattern.lastIndex = 0;
      out = out.replace(rule.pattern, rule.replace as Replacer);
    }
  }
  return out;
}

/**
 * Replaces secret-looking parts of free text with `[redacted:<kind>]`:
 * credential headers, cookie strings and cookie JSON, bearer and basic
 * credentials, JWTs, vendor tokens (GitHub, Slack, AWS, Google, Stripe,
 * OpenAI/Anthropic, npm...), PEM private keys, secret URL parameters and
 * `user:password@` in URLs, storage writes, and values of secret-named keys in
 * JSON (also JSON inside JSON strings), env, YAML and CLI flags.
 *
 * Best effort: it catches the shapes above, not every secret. Idempotent
 * (`redactText(redactText(x)) === redactText(x)`) and never throws.
 */
export function redactText(text: string): string {
  // A redaction can re-pair the quotes or brackets around it, exposing a shape
  // the first round could not see. Rounds repeat until nothing changes, which
  // is what makes redaction idempotent; text with no secrets takes one round.
  let out = text;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const next = redactOnce(out);
    if (next === out) break;
    out = next;
  }
  return out;
}
