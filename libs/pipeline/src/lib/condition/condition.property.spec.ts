import fc from 'fast-check';
import type { ConditionAst } from '../pipeline.model';
import { ConditionSyntaxError } from './condition-syntax.error';
import { evaluateCondition } from './condition.evaluator';
import { parseCondition } from './condition.parser';

/** Parses, and fails the property if anything but the typed error escapes or a call is slow. */
function parseOrSyntaxError(text: string): ConditionAst | ConditionSyntaxError {
  const started = performance.now();
  try {
    return parseCondition(text);
  } catch (error) {
    if (!(error instanceof ConditionSyntaxError)) throw error;
    expect(error.column).toBeGreaterThanOrEqual(1);
    expect(error.column).toBeLessThanOrEqual(text.length + 1);
    return error;
  } finally {
    // Parsing is linear and takes microseconds; the bound only has to catch a hang.
    expect(performance.now() - started).toBeLessThan(1000);
  }
}

const TOKENS = [
  'output',
  'input',
  '.',
  'a',
  'b_2',
  '0',
  '12',
  '-',
  '3.5',
  '1e3',
  '(',
  ')',
  '[',
  ']',
  '==',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  '=',
  '!',
  '&&',
  '||',
  '&',
  '|',
  'and',
  'or',
  'not',
  'true',
  'false',
  'null',
  "'x'",
  '"y"',
  "'",
  '"',
  '\\',
  ' ',
  '\n',
  '#',
  'é',
  '😀',
];

const quote = (s: string): string =>
  `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n').replace(/\t/g, '\\t').replace(/\r/g, '\\r')}'`;

function print(ast: ConditionAst): string {
  switch (ast.type) {
    case 'literal':
      return typeof ast.value === 'string'
        ? quote(ast.value)
        : String(ast.value);
    case 'path':
      return ast.root + ast.path.map((s) => `[${quote(s)}]`).join('');
    case 'not':
      return `(not ${print(ast.operand)})`;
    case 'and':
    case 'or':
      return `(${print(ast.left)} ${ast.type} ${print(ast.right)})`;
    case 'compare':
      return `(${print(ast.left)} ${ast.op} ${print(ast.right)})`;
  }
}

const number = fc
  .oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }))
  .filter((n) => !Object.is(n, -0));
const { ast } = fc.letrec<{ ast: ConditionAst }>((tie) => ({
  ast: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc
      .oneof(number, fc.string(), fc.boolean(), fc.constant(null))
      .map((value): ConditionAst => ({ type: 'literal', value })),
    fc.record({
      type: fc.constant('path' as const),
      root: fc.constantFrom('output', 'input'),
      path: fc.array(fc.string(), { maxLength: 3 }),
    }),
    tie('ast').map((operand): ConditionAst => ({ type: 'not', operand })),
    fc.record({
      type: fc.constantFrom('and' as const, 'or' as const),
      left: tie('ast'),
      right: tie('ast'),
    }),
    fc.record({
      type: fc.constant('compare' as const),
      op: fc.constantFrom(
        '==' as const,
        '!=' as const,
        '<' as const,
        '<=' as const,
        '>' as const,
        '>=' as const,
      ),
      left: tie('ast'),
      right: tie('ast'),
    }),
  ),
}));
const shallowAst = ast.filter(
  (a) => print(a).length < 1500 && maxParens(print(a)) < 60,
);

function maxParens(text: string): number {
  let depth = 0;
  let max = 0;
  for (const c of text) {
    if (c === '(') max = Math.max(max, ++depth);
    if (c === ')') depth--;
  }
  return max;
}

describe('condition language properties', () => {
  it('random text either parses or throws ConditionSyntaxError with a column inside it', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 300 }),
        (text) => void parseOrSyntaxError(text),
      ),
      { numRuns: 2000 },
    );
  });

  it('random token soup either parses or throws ConditionSyntaxError, quickly', () => {
    const soup = fc
      .array(fc.constantFrom(...TOKENS), { maxLength: 80 })
      .map((t) => t.join(''));
    const spaced = fc
      .array(fc.constantFrom(...TOKENS), { maxLength: 80 })
      .map((t) => t.join(' '));
    fc.assert(
      fc.property(
        fc.oneof(soup, spaced),
        (text) => void parseOrSyntaxError(text),
      ),
      { numRuns: 3000 },
    );
  });

  it('long hostile inputs are refused or parsed without blowing the stack', () => {
    for (const text of [
      '('.repeat(5000),
      '!'.repeat(5000) + 'true',
      'not '.repeat(500) + 'true',
      "'".repeat(2000),
      'output' + '.a'.repeat(1000),
    ]) {
      expect(parseOrSyntaxError(text)).toBeDefined();
    }
  });

  it('printing any tree and parsing it back gives the same tree', () => {
    fc.assert(
      fc.property(shallowAst, (tree) => {
        expect(parseCondition(print(tree))).toEqual(tree);
      }),
      { numRuns: 1000 },
    );
  });

  it('evaluation of any tree against any JSON returns a boolean and never throws', () => {
    fc.assert(
      fc.property(
        shallowAst,
        fc.jsonValue(),
        fc.jsonValue(),
        (tree, output, input) => {
          expect(typeof evaluateCondition(tree, { output, input })).toBe(
            'boolean',
          );
        },
      ),
      { numRuns: 1000 },
    );
  });
});
