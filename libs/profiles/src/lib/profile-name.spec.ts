import {
  assertProfileName,
  isProfileName,
  PROFILE_NAME_PATTERN,
  PROFILE_NAME_RULE,
  ProfileNameError,
} from '../index';
import { BAD_NAMES, GOOD_NAMES } from '../test/profile-names';

describe('profile names', () => {
  it.each(BAD_NAMES.map((n) => [JSON.stringify(n) ?? String(n), n]))('refuses %s', (_label, name) => {
    expect(isProfileName(name)).toBe(false);
    expect(() => assertProfileName(name)).toThrow(ProfileNameError);
  });

  it.each(GOOD_NAMES)('accepts %s', (name) => {
    expect(isProfileName(name)).toBe(true);
    expect(() => assertProfileName(name)).not.toThrow();
  });

  it('answers 400 profile_name_invalid, quoting the pattern and saying what to choose', () => {
    let caught: unknown;
    try {
      assertProfileName('a/b');
    } catch (e) {
      caught = e;
    }
    expect(caught).toMatchObject({ code: 'profile_name_invalid', status: 400, details: { pattern: PROFILE_NAME_RULE } });
    const message = (caught as Error).message;
    expect(message).toContain('"a/b"');
    expect(message).toContain(PROFILE_NAME_RULE);
    expect(message).toMatch(/Choose a name such as "work"/);
  });

  it('keeps the message on one readable line: control characters escaped, long input cut', () => {
    expect(new ProfileNameError('a\u0000\nb').message).toContain('"a\\u0000\\nb"');
    const long = new ProfileNameError('x'.repeat(5000)).message;
    expect(long.length).toBeLessThan(600);
    expect(new ProfileNameError(7).message).toContain('(a number, not a string)');
  });

  it('documents the same rule it enforces', () => {
    expect(PROFILE_NAME_RULE).toBe(PROFILE_NAME_PATTERN.source);
  });
});
