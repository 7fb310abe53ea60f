import type { ConditionAst } from '../pipeline.model';

/** What an edge's `if` can read. */
export interface ConditionScope {
  /** The output of the edge's `from` stage. */
  output?: unknown;
  /** The run's input. */
  input?: unknown;
}

const INDEX = /^(?:0|[1-9]\d*)$/;
/** JSON values nest far less than this; the cap keeps hostile outputs from overflowing the stack. */
const MAX_EQUALITY_DEPTH = 256;

/**
 * Evaluates a parsed `if`. Only the boolean `true` counts as true: a missing
 * field reads as `null`, and `null`, `0`, `""` or `"yes"` are not true.
 * `==`/`!=` compare JSON values deeply (different types are never equal);
 * `<`, `<=`, `>`, `>=` compare two numbers or two strings and are false for
 * any other pair. Never throws for a tree built by `parseCondition`.
 */
export function evaluateCondition(
  ast: ConditionAst,
  scope: ConditionScope,
): boolean {
  return valueOf(ast, scope) === true;
}

function valueOf(ast: ConditionAst, scope: ConditionScope): unknown {
  switch (ast.type) {
    case 'literal':
      return ast.value;
    case 'path':
      return lookup(
        ast.root === 'input'
          ? scope.input
          : ast.root === 'output'
            ? scope.output
            : undefined,
        ast.path,
      );
    case 'not':
      return valueOf(ast.operand, scope) !== true;
    case 'and':
      return (
        valueOf(ast.left, scope) === true && valueOf(ast.right, scope) === true
      );
    case 'or':
      return (
        valueOf(ast.left, scope) === true || valueOf(ast.right, scope) === true
      );
    case 'compare':
      return compare(
        ast.op,
        valueOf(ast.left, scope),
        valueOf(ast.right, scope),
      );
  }
}

function lookup(root: unknown, path: readonly string[]): unknown {
  let current: unknown = root;
  for (const segment of path) {
    if (Array.isArray(current)) {
      current = INDEX.test(segment) ? current[Number(segment)] : undefined;
    } else if (
      typeof current === 'object' &&
      current !== null &&
      Object.prototype.hasOwnProperty.call(current, segment)
    ) {
      current = (current as Record<string, unknown>)[segment];
    } else {
      current = undefined;
    }
    if (current === undefined) return null;
  }
  return current === undefined ? null : current;
}

export function compare(
  op: '==' | '!=' | '<' | '<=' | '>' | '>=',
  left: unknown,
  right: unknown,
): boolean {
  switch (op) {
    case '==':
      return jsonEqual(left, right, 0);
    case '!=':
      return !jsonEqual(left, right, 0);
    default: {
      const comparable =
        (typeof left === 'number' && typeof right === 'number') ||
        (typeof left === 'string' && typeof right === 'string');
      if (!comparable) return false;
      const a = left as number | string;
      const b = right as number | string;
      return op === '<'
        ? a < b
        : op === '<='
          ? a <= b
          : op === '>'
            ? a > b
            : a >= b;
    }
  }
}

function jsonEqual(a: unknown, b: unknown, depth: number): boolean {
  if (a === b) return true;
  if (depth > MAX_EQUALITY_DEPTH) return false;
  if (
    typeof a !== 'object' ||
    typeof b !== 'object' ||
    a === null ||
    b === null
  )
    return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return (
      a.length === b.length &&
      a.every((item, i) => jsonEqual(item, b[i], depth + 1))
    );
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  return (
    keys.length === Object.keys(right).length &&
    keys.every(
      (k) =>
        Object.prototype.hasOwnProperty.call(right, k) &&
        jsonEqual(left[k], right[k], depth + 1),
    )
  );
}

/** Result of folding a condition without a scope: known when it reads no path. */
export type FoldedCondition =
  | { known: true; value: unknown }
  | { known: false };

/**
 * Folds the parts of a condition that read no path, the way `evaluateCondition`
 * would. `false and output.x` is known false; `output.x or true` is known true.
 * The loader uses it to find edges that can never (or always) be taken.
 */
export function foldCondition(ast: ConditionAst): FoldedCondition {
  switch (ast.type) {
    case 'literal':
      return { known: true, value: ast.value };
    case 'path':
      return { known: false };
    case 'not': {
      const inner = foldCondition(ast.operand);
      return inner.known ? { known: true, value: inner.value !== true } : inner;
    }
    case 'and':
    case 'or': {
      const left = foldCondition(ast.left);
      const right = foldCondition(ast.right);
      const decisive = ast.type === 'or';
      if (
        (left.known && (left.value === true) === decisive) ||
        (right.known && (right.value === true) === decisive)
      ) {
        return { known: true, value: decisive };
      }
      if (left.known && right.known) return { known: true, value: !decisive };
      return { known: false };
    }
    case 'compare': {
      const left = foldCondition(ast.left);
      const right = foldCondition(ast.right);
      return left.known && right.known
        ? { known: true, value: compare(ast.op, left.value, right.value) }
        : { known: false };
    }
  }
}
