import { ConditionSyntaxError } from './condition-syntax.error';

export type TokenKind =
  | 'number'
  | 'string'
  | 'name'
  | 'operator'
  | '('
  | ')'
  | '['
  | ']'
  | '.'
  | 'end';

export interface Token {
  kind: TokenKind;
  /** Source text for names, numbers and operators; decoded text for strings. */
  text: string;
  /** 1-based column of the token's first character. */
  column: number;
}

/** Longer operators first so `<=` is not read as `<` then `=`. */
const OPERATORS = ['==', '!=', '<=', '>=', '&&', '||', '<', '>', '!', '-'];
const ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\',
  "'": "'",
  '"': '"',
  n: '\n',
  t: '\t',
  r: '\r',
};

const isDigit = (c: string): boolean => c >= '0' && c <= '9';
const isNameStart = (c: string): boolean =>
  (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_';
const isNamePart = (c: string): boolean => isNameStart(c) || isDigit(c);
const NUMBER = /^\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/;

/** Splits an `if` expression into tokens. Linear in the input length. */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const fail = (reason: string, at: number): never => {
    throw new ConditionSyntaxError(reason, at + 1, text);
  };
  while (i < text.length) {
    const c = text[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    const start = i;
    if (isDigit(c)) {
      const match = NUMBER.exec(text.slice(i, i + 400));
      const literal = match ? match[0] : c;
      i += literal.length;
      if (i < text.length && isNamePart(text[i])) {
        fail(`unexpected "${text[i]}" after the number ${literal}`, i);
      }
      tokens.push({ kind: 'number', text: literal, column: start + 1 });
      continue;
    }
    if (isNameStart(c)) {
      while (i < text.length && isNamePart(text[i])) i++;
      tokens.push({
        kind: 'name',
        text: text.slice(start, i),
        column: start + 1,
      });
      continue;
    }
    if (c === "'" || c === '"') {
      i++;
      let value = '';
      for (;;) {
        if (i >= text.length)
          fail(`unterminated string (missing closing ${c})`, start);
        const d = text[i];
        if (d === c) break;
        if (d === '\\') {
          const e = text[i + 1];
          const decoded =
            e !== undefined && Object.hasOwn(ESCAPES, e)
              ? ESCAPES[e]
              : undefined;
          if (decoded === undefined) {
            fail(
              e === undefined
                ? 'unterminated string (backslash at the end)'
                : `unknown escape "\\${e}" (use \\\\, \\', \\", \\n, \\t or \\r)`,
              i,
            );
          }
          value += decoded;
          i += 2;
          continue;
        }
        value += d;
        i++;
      }
      i++;
      tokens.push({ kind: 'string', text: value, column: start + 1 });
      continue;
    }
    if (c === '(' || c === ')' || c === '[' || c === ']' || c === '.') {
      tokens.push({ kind: c, text: c, column: start + 1 });
      i++;
      continue;
    }
    const op = OPERATORS.find((o) => text.startsWith(o, i));
    if (op) {
      tokens.push({ kind: 'operator', text: op, column: start + 1 });
      i += op.length;
      continue;
    }
    if (c === '=') fail('"=" is not an operator; use == to compare', i);
    if (c === '&' || c === '|')
      fail(
        `"${c}" is not an operator; use ${c}${c} or ${c === '&' ? 'and' : 'or'}`,
        i,
      );
    const printable =
      c.charCodeAt(0) < 32 ? `character code ${c.charCodeAt(0)}` : `"${c}"`;
    fail(`unexpected ${printable}`, i);
  }
  tokens.push({ kind: 'end', text: '', column: text.length + 1 });
  return tokens;
}
