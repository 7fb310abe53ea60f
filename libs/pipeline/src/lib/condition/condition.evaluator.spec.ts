import {
  evaluateCondition,
  foldCondition,
  type ConditionScope,
} from './condition.evaluator';
import { parseCondition } from './condition.parser';

const run = (text: string, scope: ConditionScope = {}): boolean =>
  evaluateCondition(parseCondition(text), scope);

describe('evaluateCondition', () => {
  const scope: ConditionScope = {
    output: {
      logged_in: false,
      url: 'https://x.test/login',
      count: 3,
      tags: ['a', 'b'],
      nested: { deep: { ok: true } },
      nothing: null,
    },
    input: { mode: 'full', limit: 10 },
  };

  it('reads the from stage output and the run input', () => {
    expect(run('not output.logged_in', scope)).toBe(true);
    expect(
      run("input.mode == 'full' and output.count < input.limit", scope),
    ).toBe(true);
    expect(run('output.nested.deep.ok', scope)).toBe(true);
    expect(
      run("output.tags.1 == 'b' and output[\"tags\"][0] == 'a'", scope),
    ).toBe(true);
  });

  it('reads a missing field, a missing stage output or a path through a scalar as null', () => {
    expect(run('output.missing == null', scope)).toBe(true);
    expect(run('output.count.more == null', scope)).toBe(true);
    expect(run('output.tags.9 == null', scope)).toBe(true);
    expect(run('output.tags.x == null', scope)).toBe(true);
    expect(run('output.a == null', {})).toBe(true);
    expect(run('input == null', { output: 1 })).toBe(true);
    expect(run('output.nothing == null', scope)).toBe(true);
  });

  it('counts only the boolean true as true', () => {
    for (const value of [1, 'yes', 'true', {}, [], null, 0, '']) {
      expect(run('output.v', { output: { v: value } })).toBe(false);
      expect(run('not output.v', { output: { v: value } })).toBe(true);
    }
    expect(run('output.v', { output: { v: true } })).toBe(true);
    expect(run('not output.missing', scope)).toBe(true);
  });

  it('never treats values of different types as equal', () => {
    expect(run("output.count == '3'", scope)).toBe(false);
    expect(run("output.count != '3'", scope)).toBe(true);
    expect(run('output.logged_in == 0', scope)).toBe(false);
    expect(run('output.nothing == false', scope)).toBe(false);
  });

  it('compares lists and objects by value', () => {
    expect(
      run('output.a == output.b', {
        output: { a: { x: [1, { y: 2 }] }, b: { x: [1, { y: 2 }] } },
      }),
    ).toBe(true);
    expect(
      run('output.a == output.b', {
        output: { a: { x: [1] }, b: { x: [1, 2] } },
      }),
    ).toBe(false);
    expect(
      run('output.a == output.b', { output: { a: { x: 1 }, b: { y: 1 } } }),
    ).toBe(false);
    expect(run('output.a == output.b', { output: { a: [], b: {} } })).toBe(
      false,
    );
  });

  it('orders two numbers or two strings, and nothing else', () => {
    expect(
      run(
        'output.count > 2 and output.count >= 3 and output.count <= 3 and output.count < 4',
        scope,
      ),
    ).toBe(true);
    expect(run("'abc' < 'abd'", scope)).toBe(true);
    for (const op of ['<', '<=', '>', '>=']) {
      expect(run(`output.count ${op} '3'`, scope)).toBe(false);
      expect(run(`output.missing ${op} 1`, scope)).toBe(false);
      expect(run(`null ${op} null`, scope)).toBe(false);
      expect(run(`true ${op} false`, scope)).toBe(false);
    }
  });

  it('never reads inherited properties (no prototype walking)', () => {
    expect(run('output.constructor == null', { output: {} })).toBe(true);
    expect(run('output.__proto__ == null', { output: {} })).toBe(true);
    expect(run('output.length == null', { output: 'text' })).toBe(true);
    expect(run('output.tags.length == null', scope)).toBe(true);
  });

  it('short-circuits and / or', () => {
    expect(run('false and output.x.y.z', scope)).toBe(false);
    expect(run('true or output.x', scope)).toBe(true);
  });
});

describe('foldCondition', () => {
  it.each([
    ['false', { known: true, value: false }],
    ['1 == 2', { known: true, value: false }],
    ['not true', { known: true, value: false }],
    ['false and output.x', { known: true, value: false }],
    ['output.x or true', { known: true, value: true }],
    ["'a' != 'b'", { known: true, value: true }],
    ['output.x', { known: false }],
    ['output.x and true', { known: false }],
    ['not output.x', { known: false }],
  ])('folds %s', (text, folded) => {
    expect(foldCondition(parseCondition(text))).toEqual(folded);
  });
});
