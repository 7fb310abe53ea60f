import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HostConfigError, parseHostConfig } from '../index';

const FIXTURES = join(__dirname, '../../../../tests/fixtures/host-config');

function yamlFiles(dir: string): string[] {
  return readdirSync(join(FIXTURES, dir))
    .filter((f) => f.endsWith('.yaml'))
    .sort();
}

/** `# expect: <path> <message substring>`; `(root)` stands for problems of the whole file. */
function expectation(source: string, file: string): { path: string; substring: string } {
  const m = /^# expect: (\S+) (.+)$/m.exec(source.split('\n')[0]);
  if (!m) throw new Error(`${file} must begin with "# expect: <path> <message substring>"`);
  return { path: m[1] === '(root)' ? '' : m[1], substring: m[2].trim() };
}

describe('invalid host config fixtures', () => {
  const files = yamlFiles('invalid');

  it('has at least 25 of them', () => {
    expect(files.length).toBeGreaterThanOrEqual(25);
  });

  it.each(files)('%s is refused with its expected key path and message', (file) => {
    const source = readFileSync(join(FIXTURES, 'invalid', file), 'utf8');
    const { path, substring } = expectation(source, file);
    let error: unknown;
    try {
      parseHostConfig(source, file);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(HostConfigError);
    const problems = (error as HostConfigError).details;
    const match = problems.find((p) => p.path === path && p.message.includes(substring));
    if (!match)
      throw new Error(
        `${file}: no problem at "${path}" containing "${substring}" in:\n${JSON.stringify(problems, null, 2)}`,
      );
    // Messages name the key path, and positions point into the file, not at line 0.
    if (path) expect(match.message.startsWith(path)).toBe(true);
    expect(match.line).toBeGreaterThanOrEqual(1);
    expect(match.column).toBeGreaterThanOrEqual(1);
    expect((error as HostConfigError).code).toBe('host_config_invalid');
    expect((error as HostConfigError).message).toContain(`${file}:${match.line}:${match.column}`);
  });
});

describe('valid host config fixtures', () => {
  it.each(yamlFiles('valid'))('%s loads', (file) => {
    expect(() => parseHostConfig(readFileSync(join(FIXTURES, 'valid', file), 'utf8'), file)).not.toThrow();
  });
});
