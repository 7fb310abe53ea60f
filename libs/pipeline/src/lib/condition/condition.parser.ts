import type { ConditionAst } from '../pipeline.model';
import { ConditionSyntaxError } from './condition-syntax.error';
import { tokenize, type Token } from './condition.tokenizer';

/** Longer expressions are refused: an `if` is a short test, not a program. */
export const MAX_CONDITION_LENGTH = 2048;
/** Bounds recursion so `((((…` or `!!!!…` cannot exhaust the stack. */
export const MAX_CONDITION_DEPTH = 64;

/** Where a path may start: the `from` stage's output, or the run's input. */
export const CONDITION_ROOTS = ['output', 'input'] as const;

type CompareOp = '==' | '!=' | '<' | '<=' | '>' | '>=';
const COMPARE_OPS: readonly string[] = ['==', '!=', '<', '<=', '>', '>='];
const INDEX = /^(?:0|[1-9]\d*)$/;

/**
 * Parses an `if` expression into a {@link ConditionAst}.
 *
 * Grammar (lowest precedence first):
 * ```
 * or      := and (("or" | "||") and)*
 * and     := not (("and" | "&&") not)*
 * not     := ("not" | "!") not | compare
 * compare := operand (("==" | "!=" | "<" | "<=" | ">" | ">=") operand)?
 * operand := "(" or ")" | literal | path
 * literal := number | "-" number | 'text' | "text" | true | false | null
 * path    := ("output" | "input") ("." name | "." index | "[" (string | index) "]")*
 * ```
 * Hand-written; nothing is ever passed to `eval` or `Function`.
 *
 * @throws ConditionSyntaxError with the 1-based column inside `text`.
 */
export function parseCondition(text: string): ConditionAst {
  if (typeof text !== 'string') {
    throw new ConditionSyntaxError(
      'the condition must be a string',
      1,
      String(text),
    );
  }
  if (text.length > MAX_CONDITION_LENGTH) {
    throw new ConditionSyntaxError(
      `the condition is ${text.length} characters long; the limit is ${MAX_CONDITION_LENGTH}`,
      MAX_CONDITION_LENGTH + 1,
      text,
    );
  }
  return new ConditionParser(text, tokenize(text)).parse();
}

class ConditionParser {
  private index = 0;
  private depth = 0;

  constructor(
    private readonly text: string,
    private readonly tokens: Token[],
  ) {}

  parse(): ConditionAst {
    if (this.peek().kind === 'end')
      this.fail('the condition is empty; expected a value', this.peek());
    const ast = this.parseOr();
    const next = this.peek();
    if (next.kind !== 'end') {
      this.fail(
        `unexpected ${describe(next)}; expected "and", "or" or the end`,
        next,
      );
    }
    return ast;
  }

  private parseOr(): ConditionAst {
    let left = this.parseAnd();
    while (this.acceptWord('or', '||')) {
      left = { type: 'or', left, right: this.parseAnd() };
    }
    return left;
  }

  private parseAnd(): ConditionAst {
    let left = this.parseNot();
    while (this.acceptWord('and', '&&')) {
      left = { type: 'and', left, right: this.parseNot() };
    }
    return left;
  }

  private parseNot(): ConditionAst {
    const token = this.peek();
    if (this.acceptWord('not', '!')) {
      return this.nested(token, () => ({
        type: 'not',
        operand: this.parseNot(),
      }));
    }
    return this.parseCompare();
  }

  private parseCompare(): ConditionAst {
    const left = this.parseOperand();
    const op = this.peek();
    if (op.kind !== 'operator' || !COMPARE_OPS.includes(op.text)) return left;
    this.index++;
    const right = this.parseOperand();
    const after = this.peek();
    if (after.kind === 'operator' && COMPARE_OPS.includes(after.text)) {
      this.fail('comparisons cannot be chained; join them with "and"', after);
    }
    return { type: 'compare', op: op.text as CompareOp, left, right };
  }

  private parseOperand(): ConditionAst {
    const token = this.next();
    switch (token.kind) {
      case '(':
        return this.nested(token, () => {
          const inner = this.parseOr();
          const close = this.peek();
          if (close.kind !== ')') {
            this.fail(
              `expected ")" to close the "(" at column ${token.column}, found ${describe(close)}`,
              close,
            );
          }
          this.index++;
          return inner;
        });
      case 'number':
        return { type: 'literal', value: this.number(token, 1) };
      case 'string':
        return { type: 'literal', value: token.text };
      case 'operator':
        if (token.text === '-' && this.peek().kind === 'number') {
          return { type: 'literal', value: this.number(this.next(), -1) };
        }
        return this.fail(
          `unexpected ${describe(token)}; expected a value`,
          token,
        );
      case 'name':
        return this.parseName(token);
      default:
        return this.fail(
          `unexpected ${describe(token)}; expected a value`,
          token,
        );
    }
  }

  private parseName(token: Token): ConditionAst {
    switch (token.text) {
      case 'true':
        return { type: 'literal', value: true };
      case 'false':
        return { type: 'literal', value: false };
      case 'null':
        return { type: 'literal', value: null };
      case 'output':
      case 'input':
        return { type: 'path', root: token.text, path: this.parsePath() };
      case 'and':
      case 'or':
      case 'not':
        return this.fail(`unexpected "${token.text}"; expected a value`, token);
      default:
        return this.fail(
          `unknown name "${token.text}"; a path starts with output. or input., and text needs quotes ('${token.text}')`,
          token,
        );
    }
  }

  private parsePath(): string[] {
    const path: string[] = [];
    for (;;) {
      const token = this.peek();
      if (token.kind === '.') {
        this.index++;
        const segment = this.next();
        if (
          segment.kind === 'name' ||
          (segment.kind === 'number' && INDEX.test(segment.text))
        ) {
          path.push(segment.text);
          continue;
        }
        this.fail(
          `expected a field name or list index after ".", found ${describe(segment)}`,
          segment,
        );
      } else if (token.kind === '[') {
        this.index++;
        const key = this.next();
        if (
          !(
            key.kind === 'string' ||
            (key.kind === 'number' && INDEX.test(key.text))
          )
        ) {
          this.fail(
            `expected a quoted field name or a list index inside "[ ]", found ${describe(key)}`,
            key,
          );
        }
        const close = this.next();
        if (close.kind !== ']')
          this.fail(`expected "]", found ${describe(close)}`, close);
        path.push(key.text);
      } else {
        return path;
      }
    }
  }

  private nested(token: Token, parse: () => ConditionAst): ConditionAst {
    if (++this.depth > MAX_CONDITION_DEPTH) {
      this.fail(
        `the condition nests deeper than ${MAX_CONDITION_DEPTH} levels`,
        token,
      );
    }
    const ast = parse();
    this.depth--;
    return ast;
  }

  private number(token: Token, sign: 1 | -1): number {
    const value = Number(token.text) * sign;
    if (!Number.isFinite(value))
      this.fail(`the number ${token.text} is out of range`, token);
    return value;
  }

  private acceptWord(word: string, symbol: string): boolean {
    const token = this.peek();
    const matches =
      (token.kind === 'name' && token.text === word) ||
      (token.kind === 'operator' && token.text === symbol);
    if (matches) this.index++;
    return matches;
  }

  private peek(): Token {
    return this.tokens[this.index];
  }

  private next(): Token {
    const token = this.tokens[this.index];
    if (token.kind !== 'end') this.index++;
    return token;
  }

  private fail(reason: string, token: Token): never {
    throw new ConditionSyntaxError(reason, token.column, this.text);
  }
}

function describe(token: Token): string {
  switch (token.kind) {
    case 'end':
      return 'the end of the condition';
    case 'string':
      return 'a string';
    case 'number':
      return `the number ${token.text}`;
    default:
      return `"${token.text}"`;
  }
}
