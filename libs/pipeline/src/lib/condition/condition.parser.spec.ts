import type { ConditionAst } from '../pipeline.model';
import { ConditionSyntaxError } from './condition-syntax.error';
import {
  MAX_CONDITION_DEPTH,
  MAX_CONDITION_LENGTH,
  parseCondition,
} from './condition.parser';

const path = (root: string, ...segments: string[]): ConditionAst => ({
  type: 'path',
  root,
  path: segments,
});
const lit = (value: string | number | boolean | null): ConditionAst => ({
  type: 'literal',
  value,
});

function syntaxError(text: string): ConditionSyntaxError {
  try {
    parseCondition(text);
  } catch (error) {
    if (error instanceof ConditionSyntaxError) return error;
    throw error;
  }
  throw new Error(`expected "${text}" to be rejected`);
}

describe('parseCondition', () => {
  it.each<[string, ConditionAst]>([
    ['true', lit(true)],
    ['false', lit(false)],
    ['null', lit(null)],
    ['42', lit(42)],
    ['-1.5', lit(-1.5)],
    ['2e3', lit(2000)],
  ])('reads the literal %s', (text, ast) => {
    expect(parseCondition(text)).toEqual(ast);
  });

  it('reads single- and double-quoted strings with escapes', () => {
    expect(parseCondition(`'a "b"'`)).toEqual(lit('a "b"'));
    expect(parseCondition(`"it's"`)).toEqual(lit("it's"));
    expect(parseCondition(String.raw`'tab\there\\ \'q\''`)).toEqual(
      lit("tab\there\\ 'q'"),
    );
  });

  it('reads paths on output and input, with dots, indexes and quoted keys', () => {
    expect(parseCondition('output')).toEqual(path('output'));
    expect(parseCondition('output.a.b')).toEqual(path('output', 'a', 'b'));
    expect(parseCondition('input.items.0.name')).toEqual(
      path('input', 'items', '0', 'name'),
    );
    expect(parseCondition(`output["my-key"][2]`)).toEqual(
      path('output', 'my-key', '2'),
    );
    expect(parseCondition('output.not.and')).toEqual(
      path('output', 'not', 'and'),
    );
  });

  it('binds not tighter than and, and and tighter than or', () => {
    expect(parseCondition('not output.a or output.b and output.c')).toEqual({
      type: 'or',
      left: { type: 'not', operand: path('output', 'a') },
      right: {
        type: 'and',
        left: path('output', 'b'),
        right: path('output', 'c'),
      },
    });
  });

  it('applies not to a whole comparison', () => {
    expect(parseCondition('not output.n == 1')).toEqual({
      type: 'not',
      operand: {
        type: 'compare',
        op: '==',
        left: path('output', 'n'),
        right: lit(1),
      },
    });
  });

  it('lets parentheses override precedence', () => {
    expect(parseCondition('(output.a or output.b) and output.c')).toEqual({
      type: 'and',
      left: {
        type: 'or',
        left: path('output', 'a'),
        right: path('output', 'b'),
      },
      right: path('output', 'c'),
    });
  });

  it('accepts &&, || and ! as spellings of and, or, not', () => {
    expect(parseCondition('!output.a && input.b || false')).toEqual(
      parseCondition('not output.a and input.b or false'),
    );
  });

  it.each(['==', '!=', '<', '<=', '>', '>='] as const)(
    'reads the comparison %s',
    (op) => {
      expect(parseCondition(`output.count ${op} 3`)).toEqual({
        type: 'compare',
        op,
        left: path('output', 'count'),
        right: lit(3),
      });
    },
  );

  it('ignores whitespace, including newlines from folded YAML', () => {
    expect(parseCondition('  output.ok\n  and\tinput.go  ')).toEqual(
      parseCondition('output.ok and input.go'),
    );
  });

  it.each([
    ['', 1, 'empty'],
    ['output.a ==', 12, 'expected a value'],
    ['output.a = 1', 10, 'use =='],
    ['output.a === 1', 12, 'use =='],
    ['output.a & output.b', 10, 'use &&'],
    ['(output.a', 10, 'expected ")"'],
    ['output.a)', 9, 'unexpected ")"'],
    ["'open", 1, 'unterminated string'],
    [String.raw`'bad \q'`, 6, 'unknown escape'],
    ['logged_in', 1, 'unknown name "logged_in"'],
    ['output.', 8, 'expected a field name'],
    ['output[x]', 8, 'quoted field name'],
    ['output[0', 9, 'expected "]"'],
    ['1 < output.n < 5', 14, 'cannot be chained'],
    ['output.a output.b', 10, 'expected "and", "or"'],
    ['12abc', 3, 'after the number'],
    ['output.a # note', 10, 'unexpected "#"'],
    ['- output.a', 1, 'expected a value'],
    ['and', 1, 'unexpected "and"'],
  ])('rejects %j at column %i (%s)', (text, column, reason) => {
    const error = syntaxError(text);
    expect(error.column).toBe(column);
    expect(error.reason).toContain(reason);
    expect(error.code).toBe('invalid_condition');
    expect(error.expression).toBe(text);
    expect(error.details).toEqual({ column, expression: text });
  });

  it('limits nesting so hostile input cannot exhaust the stack', () => {
    const deep =
      '('.repeat(MAX_CONDITION_DEPTH + 1) +
      'true' +
      ')'.repeat(MAX_CONDITION_DEPTH + 1);
    expect(syntaxError(deep).reason).toContain('nests deeper');
    expect(
      syntaxError('not '.repeat(MAX_CONDITION_DEPTH + 1) + 'true').reason,
    ).toContain('nests deeper');
    const fine =
      '('.repeat(MAX_CONDITION_DEPTH) +
      'true' +
      ')'.repeat(MAX_CONDITION_DEPTH);
    expect(parseCondition(fine)).toEqual(lit(true));
  });

  it('limits the length of an expression', () => {
    const long = 'output.a == ' + '1'.repeat(MAX_CONDITION_LENGTH);
    expect(syntaxError(long).column).toBe(MAX_CONDITION_LENGTH + 1);
  });
});
