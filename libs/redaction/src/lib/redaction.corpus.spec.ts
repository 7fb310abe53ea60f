import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { redactText, redactValue } from '../index';

interface SecretCase {
  name: string;
  input: string;
  mustNotContain: string[];
  mustContain?: string[];
}

const corpus = JSON.parse(readFileSync(join(__dirname, '../../../../tests/fixtures/secrets/corpus.json'), 'utf8')) as {
  secrets: SecretCase[];
  keep: { name: string; input: string }[];
};

describe('secret corpus', () => {
  it('has at least 30 secret shapes and a list of non-secrets', () => {
    expect(corpus.secrets.length).toBeGreaterThanOrEqual(30);
    expect(corpus.keep.length).toBeGreaterThanOrEqual(20);
  });

  it.each(corpus.secrets.map((c) => [c.name, c] as const))('redacts %s', (_name, c) => {
    const out = redactText(c.input);
    for (const secret of c.mustNotContain) expect(out).not.toContain(secret);
    for (const kept of c.mustContain ?? []) expect(out).toContain(kept);
    expect(out).toContain('[redacted:');
  });

  it.each(corpus.secrets.map((c) => [c.name, c] as const))('redacts %s inside a structured value too', (_name, c) => {
    const out = JSON.stringify(redactValue({ log: [c.input], nested: { text: c.input } }));
    for (const secret of c.mustNotContain) expect(out).not.toContain(secret);
  });

  it.each(corpus.keep.map((c) => [c.name, c.input] as const))('leaves %s unchanged', (_name, input) => {
    expect(redactText(input)).toBe(input);
  });
});

describe('redaction properties', () => {
  // Pieces that put random text next to and inside real secret shapes.
  // prettier-ignore
  const pieces = [
    'password', 'token', 'Cookie', 'Authorization', 'Bearer ', 'Basic ', 'sid', '=', ': ', '; ', '"', "'", '\\"',
    '\n', '?', '&', '#', '@', '://', '[', ']', '{', '}', ',', '-', '${X}', '[redacted:token]', '[redacted:', 'eyJ',
    'ghp_', 'sk-', '-----BEGIN PRIVATE KEY-----', 'localStorage.setItem(', '"name":"sid","value":"', '--password ',
    'export ', 'https://a:b@', 'document.cookie = "', 'x-api-key',
  ];
  const fragment = fc.oneof(
    { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
    { weight: 2, arbitrary: fc.constantFrom(...corpus.secrets.map((c) => c.input), ...corpus.keep.map((c) => c.input)) },
    { weight: 3, arbitrary: fc.constantFrom(...pieces) },
  );
  const text = fc.array(fragment, { maxLength: 12 }).map((parts) => parts.join(''));

  it('is idempotent', () => {
    fc.assert(
      fc.property(text, (t) => {
        const once = redactText(t);
        expect(redactText(once)).toBe(once);
      }),
      { numRuns: 2000 },
    );
  });

  it('never throws, and redactValue always gives JSON', () => {
    fc.assert(
      fc.property(fc.oneof(text, fc.anything()), (v) => {
        if (typeof v === 'string') expect(() => redactText(v)).not.toThrow();
        const out = redactValue(v);
        expect(JSON.parse(JSON.stringify(out) ?? 'null')).toEqual(out);
      }),
      { numRuns: 1000 },
    );
  });
});
