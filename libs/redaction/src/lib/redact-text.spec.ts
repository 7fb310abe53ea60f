import { redactText } from '../index';

describe('redactText', () => {
  it('names what it removed', () => {
    expect(redactText('Authorization: Bearer abc.def.ghi-123456789')).toBe(
      'Authorization: Bearer [redacted:authorization]',
    );
    expect(redactText('{"password":"x1"}')).toBe('{"password":"[redacted:password]"}');
    expect(redactText('AKIAIOSFODNN7EXAMPLE')).toBe('[redacted:aws_access_key_id]');
  });

  it('keeps JSON valid when it redacts inside it', () => {
    const line = JSON.stringify({
      msg: 'ok',
      headers: { Cookie: 'sid=1; theme=dark' },
      body: JSON.stringify({ token: 'abc123' }),
    });
    const out = redactText(line);
    expect(() => JSON.parse(out)).not.toThrow();
    expect(out).not.toContain('sid=1');
    expect(out).not.toContain('abc123');
  });

  it('redacts each line of a multi-line log on its own', () => {
    expect(redactText('password: a b c\nuser: alice\n')).toBe('password: [redacted:password]\nuser: alice\n');
  });

  it('keeps the cookie names of a cookie string and drops session values only', () => {
    expect(redactText('lang=en; sessionid=abc; _ga=GA1.2.3')).toBe('lang=en; sessionid=[redacted:cookie]; _ga=GA1.2.3');
  });

  it('redacts a 1 MB log (a sanity bound, not a benchmark)', () => {
    const line =
      '2024-05-01T10:00:00Z INFO stage=work fetched https://example.com/page?id=42 in 12 ms token=abc123 Cookie: sid=x\n';
    const log = line.repeat(Math.ceil((1024 * 1024) / line.length));
    const started = Date.now();
    const out = redactText(log);
    const elapsed = Date.now() - started;
    expect(out).not.toContain('abc123');
    expect(out).not.toContain('sid=x');
    // Generous: a quadratic pattern would take minutes here, not seconds.
    expect(elapsed).toBeLessThan(10_000);
  });

  // Each of these once took minutes: a pattern retried at every "=" or a value rescanned at every ":".
  it.each([
    ['keys with no separators', 'password='],
    ['URL-like runs', 'https://a:'],
    ['colons', 'a: '],
    ['unterminated PEM headers', '-----BEGIN PRIVATE KEY-----"'],
  ])('stays fast on adversarial %s', (_name, unit) => {
    const text = unit.repeat(Math.ceil((256 * 1024) / unit.length));
    const started = Date.now();
    redactText(text);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('stays linear on a megabyte with no separators', () => {
    const blob = 'a'.repeat(1024 * 1024);
    const started = Date.now();
    expect(redactText(blob)).toBe(blob);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
