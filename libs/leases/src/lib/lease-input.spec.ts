import fc from 'fast-check';
import { StageflowError } from '@stageflow/contracts';
import { assertProfileRef, assertRunId, assertToken } from './lease-input';

function codeOf(fn: () => void): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(StageflowError);
    return (err as StageflowError).code;
  }
}

describe('lease input', () => {
  it.each(['local', 'work', 'a', 'Work.2', 'my_profile-1', 'x'.repeat(64)])('accepts the profile name %s', (name) => {
    expect(codeOf(() => assertProfileRef('local', name))).toBeUndefined();
  });

  it.each(['', '.', '..', '.hidden', '-x', '_x', 'a/b', 'a\\b', 'a:b', 'a b', 'ü', 'x'.repeat(65), 'a\n'])(
    'refuses the profile name %j',
    (name) => {
      expect(codeOf(() => assertProfileRef('local', name))).toBe('invalid_profile_name');
    },
  );

  it('checks the scope before the profile and says which one is wrong', () => {
    expect(codeOf(() => assertProfileRef('../etc', 'work'))).toBe('invalid_scope');
    expect(codeOf(() => assertProfileRef(42, 'work'))).toBe('invalid_scope');
    expect(codeOf(() => assertProfileRef('local', undefined))).toBe('invalid_profile_name');
  });

  it('never accepts a name that could leave its folder or split a Redis key', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 70 }), (name) => {
        const accepted = codeOf(() => assertProfileRef('local', name)) === undefined;
        if (accepted) {
          expect(name).not.toMatch(/[/\\:\s]/);
          expect(['.', '..']).not.toContain(name);
          expect(name.length).toBeLessThanOrEqual(64);
        }
      }),
    );
  });

  it('accepts run ids of the shape used everywhere and refuses others', () => {
    expect(codeOf(() => assertRunId('r_01HZX-abc'))).toBeUndefined();
    expect(codeOf(() => assertRunId('x'.repeat(128)))).toBeUndefined();
    for (const bad of ['', 'x'.repeat(129), 'a.b', 'a/b', 'a:b', null, 7]) {
      expect(codeOf(() => assertRunId(bad))).toBe('invalid_run_id');
    }
  });

  it('accepts only positive safe integers as tokens', () => {
    expect(codeOf(() => assertToken(1))).toBeUndefined();
    for (const bad of [0, -1, 1.5, Number.MAX_SAFE_INTEGER + 1, '3', NaN]) {
      expect(codeOf(() => assertToken(bad))).toBe('invalid_lease_token');
    }
  });

  it('keeps an oversized value out of the message', () => {
    try {
      assertProfileRef('local', 'y'.repeat(5000));
    } catch (err) {
      expect((err as Error).message.length).toBeLessThan(300);
    }
  });
});
