import {
  isAlias,
  isMap,
  isScalar,
  isSeq,
  type Document,
  type LineCounter,
  type Scalar,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';
import type { PipelineDiagnosticCode } from '../pipeline-diagnostic';
import type { DiagnosticSink, Position } from './diagnostic.sink';

export type YamlNode = Scalar | YAMLMap | YAMLSeq;

/** One `key: value` of a mapping (or one item of a list, with `key` = its index). */
export interface Field {
  key: string;
  /** The value; `null` when the key has no value at all. */
  node: YamlNode | null;
  /** Document path, e.g. `stages[1].env.HOME`. */
  path: string;
  /** Where the key is (the item itself for list items). */
  keyAt: Position;
  /** Where the value is; the key's position when the value is empty. */
  at: Position;
}

/** Hard ceiling on values copied out of the YAML tree (schemas), alias expansion included. */
const MAX_PLAIN_NODES = 100_000;
const MAX_PLAIN_DEPTH = 128;

const join = (path: string, key: string): string =>
  /^[A-Za-z_][A-Za-z0-9_-]*$/.test(key)
    ? path
      ? `${path}.${key}`
      : key
    : `${path}[${JSON.stringify(key)}]`;

/**
 * Reads the `yaml` node tree with positions, reporting type problems to the
 * sink. Readers return `undefined` when the value is absent or wrong, so the
 * caller can go on and collect further problems.
 */
export class YamlNodeReader {
  constructor(
    private readonly doc: Document.Parsed,
    private readonly lines: LineCounter,
    private readonly source: string,
    readonly sink: DiagnosticSink,
  ) {}

  /** Follows an alias to its anchored node. */
  resolve(node: unknown): YamlNode | null {
    if (isAlias(node)) {
      const target = node.resolve(this.doc);
      return target ?? null;
    }
    if (isScalar(node) || isMap(node) || isSeq(node)) return node;
    return null;
  }

  position(offset: number): Position {
    const { line, col } = this.lines.linePos(Math.max(0, offset));
    return { line, column: col };
  }

  at(node: YamlNode | null, fallback: Position): Position {
    if (!node?.range) return fallback;
    const [start, end] = node.range;
    // `key:` with nothing after it has an empty null scalar; point at the key instead.
    if (isScalar(node) && node.value === null && start === end) return fallback;
    return this.position(start);
  }

  /**
   * Where column `column` (1-based) of a scalar's text is, when the scalar is
   * written on one line exactly as its value (plain, or quoted without
   * escapes). Otherwise the scalar's own position.
   */
  positionInScalar(field: Field, column: number): Position {
    const node = field.node;
    if (!isScalar(node) || typeof node.value !== 'string' || !node.range)
      return field.at;
    const [start, end] = node.range;
    const raw = this.source.slice(start, end);
    if (raw.includes('\n')) return field.at;
    if (node.type === 'PLAIN' && raw === node.value)
      return this.position(start + column - 1);
    const quoted = node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE';
    if (quoted && raw.slice(1, -1) === node.value)
      return this.position(start + column);
    return field.at;
  }

  /**
   * Where a value inside `field` is, following a JSON pointer's segments
   * (`['properties', 'a', 'type']`). Stops at the deepest node found.
   */
  positionOf(field: Field, segments: readonly string[]): Position {
    let node = field.node;
    let at = field.at;
    for (const segment of segments) {
      let next: YamlNode | null | undefined;
      if (isMap(node)) {
        const pair = node.items.find((p) => {
          const key = this.resolve(p.key);
          return isScalar(key) && String(key.value) === segment;
        });
        next = pair ? this.resolve(pair.value) : undefined;
        if (pair && next === null) return this.at(this.resolve(pair.key), at);
      } else if (isSeq(node) && /^\d+$/.test(segment)) {
        next = this.resolve(node.items[Number(segment)]);
      }
      if (!next) return at;
      node = next;
      at = this.at(node, at);
    }
    return at;
  }

  /** Where the first mapping key named `key` inside `field` is (depth-first, bounded). */
  keyPosition(field: Field, key: string): Position | undefined {
    const stack: Array<{ node: YamlNode | null; depth: number }> = [
      { node: field.node, depth: 0 },
    ];
    const seen = new Set<YamlNode>();
    while (stack.length > 0) {
      const { node, depth } = stack.pop() as {
        node: YamlNode | null;
        depth: number;
      };
      if (!node || isScalar(node) || seen.has(node) || depth > MAX_PLAIN_DEPTH)
        continue;
      seen.add(node);
      const children: Array<YamlNode | null> = [];
      for (const item of node.items) {
        if (isMap(node)) {
          const pair = item as { key: unknown; value: unknown };
          const k = this.resolve(pair.key);
          if (isScalar(k) && String(k.value) === key)
            return this.at(k, field.at);
          children.push(this.resolve(pair.value));
        } else {
          children.push(this.resolve(item));
        }
      }
      for (const child of children.reverse())
        stack.push({ node: child, depth: depth + 1 });
    }
    return undefined;
  }

  /** A string value of `key` in a mapping, without reporting anything (for naming things in messages). */
  peekString(field: Field, key: string): string | undefined {
    if (!isMap(field.node)) return undefined;
    for (const pair of field.node.items) {
      const k = this.resolve(pair.key);
      const v = this.resolve(pair.value);
      if (
        isScalar(k) &&
        k.value === key &&
        isScalar(v) &&
        typeof v.value === 'string'
      )
        return v.value;
    }
    return undefined;
  }

  /**
   * The entries of a mapping. Keys outside `known` are `unknown_key` errors
   * unless `onUnknown` claims them. Returns `undefined` (after a `wrong_type`)
   * when the node is not a mapping.
   */
  fields(
    field: Field,
    known: readonly string[],
    what: string,
    onUnknown?: (entry: Field) => boolean,
  ): Map<string, Field> | undefined {
    const map = field.node;
    if (!isMap(map)) {
      this.wrongType(
        field,
        `${what} must be a mapping (key: value lines)`,
        'a mapping',
      );
      return undefined;
    }
    const out = new Map<string, Field>();
    for (const pair of map.items) {
      const keyNode = this.resolve(pair.key);
      const keyAt = this.at(keyNode, field.at);
      if (
        !isScalar(keyNode) ||
        keyNode.value === null ||
        typeof keyNode.value === 'object'
      ) {
        this.sink.error(
          'wrong_type',
          keyAt,
          `A key in ${what} is ${describe(keyNode)}; keys must be plain names.`,
          'Write keys as plain words, e.g. `name: value`.',
          field.path,
        );
        continue;
      }
      const key = String(keyNode.value);
      const node = this.resolve(pair.value);
      const entry: Field = {
        key,
        node,
        path: join(field.path, key),
        keyAt,
        at: this.at(node, keyAt),
      };
      if (known.includes(key)) {
        out.set(key, entry);
      } else if (!onUnknown?.(entry)) {
        this.unknownKey(entry, known, what);
      }
    }
    return out;
  }

  /** The items of a list, or `undefined` (after a `wrong_type`) when it is not a list. */
  items(field: Field, what: string): Field[] | undefined {
    const seq = field.node;
    if (!isSeq(seq)) {
      this.wrongType(
        field,
        `${what} must be a list`,
        'a list (lines starting with "- ")',
      );
      return undefined;
    }
    return seq.items.map((item, index) => {
      const node = this.resolve(item);
      return {
        key: String(index),
        node,
        path: `${field.path}[${index}]`,
        keyAt: this.at(node, field.at),
        at: this.at(node, field.at),
      };
    });
  }

  string(
    field: Field | undefined,
    what: string,
    options: { nonEmpty?: boolean } = {},
  ): string | undefined {
    if (!field) return undefined;
    const node = field.node;
    if (isScalar(node) && typeof node.value === 'string') {
      if (options.nonEmpty && node.value.trim() === '') {
        this.sink.error(
          'invalid_value',
          field.at,
          `${what} is empty.`,
          `Give ${what} a value.`,
          field.path,
        );
        return undefined;
      }
      return node.value;
    }
    this.wrongType(field, `${what} must be a string`, 'a string', true);
    return undefined;
  }

  integer(
    field: Field | undefined,
    what: string,
    min: number,
    max: number,
  ): number | undefined {
    if (!field) return undefined;
    const node = field.node;
    if (!isScalar(node) || typeof node.value !== 'number') {
      this.wrongType(field, `${what} must be a whole number`, 'a number');
      return undefined;
    }
    const value = node.value;
    if (!Number.isInteger(value) || value < min || value > max) {
      this.sink.error(
        'invalid_value',
        field.at,
        `${what} is ${String(value)}; it must be a whole number from ${min} to ${max}.`,
        `Use a whole number between ${min} and ${max}.`,
        field.path,
      );
      return undefined;
    }
    return value;
  }

  boolean(field: Field | undefined, what: string): boolean | undefined {
    if (!field) return undefined;
    const node = field.node;
    if (isScalar(node) && typeof node.value === 'boolean') return node.value;
    this.wrongType(field, `${what} must be true or false`, 'true or false');
    return undefined;
  }

  /**
   * Copies a value out of the tree as plain JSON (for `*_schema`), or says
   * why it cannot: a non-JSON value, an anchor that contains itself, or too
   * large / too deep.
   */
  plain(field: Field): { value: unknown } | { problem: string } {
    let budget = MAX_PLAIN_NODES;
    const active = new Set<YamlNode>();
    const convert = (raw: unknown, depth: number): unknown => {
      const node = this.resolve(raw);
      if (node === null) return null;
      if (--budget < 0)
        throw new PlainValueProblem(
          `it expands to more than ${MAX_PLAIN_NODES} values`,
        );
      if (depth > MAX_PLAIN_DEPTH)
        throw new PlainValueProblem(
          `it nests deeper than ${MAX_PLAIN_DEPTH} levels`,
        );
      if (isScalar(node)) {
        const v = node.value;
        if (v === null || typeof v === 'string' || typeof v === 'boolean')
          return v;
        if (typeof v === 'number' && Number.isFinite(v)) return v;
        throw new PlainValueProblem(
          `it holds ${describe(node)}, which JSON cannot represent`,
        );
      }
      if (active.has(node))
        throw new PlainValueProblem(
          'an alias refers to the value it is inside of',
        );
      active.add(node);
      try {
        if (isSeq(node))
          return node.items.map((item) => convert(item, depth + 1));
        const out: Record<string, unknown> = {};
        for (const pair of node.items) {
          const key = this.resolve(pair.key);
          if (
            !isScalar(key) ||
            key.value === null ||
            typeof key.value === 'object'
          ) {
            throw new PlainValueProblem('a key is not a plain name');
          }
          // defineProperty, not assignment: a `__proto__` key must stay an ordinary key.
          Object.defineProperty(out, String(key.value), {
            value: convert(pair.value, depth + 1),
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
        return out;
      } finally {
        active.delete(node);
      }
    };
    try {
      return { value: convert(field.node, 0) };
    } catch (error) {
      if (error instanceof PlainValueProblem) return { problem: error.message };
      throw error;
    }
  }

  wrongType(
    field: Field,
    expectation: string,
    expected: string,
    quoteHint = false,
  ): void {
    const node = field.node;
    const found = describe(node);
    const scalarText =
      isScalar(node) && node.value !== null && typeof node.value !== 'object'
        ? String(node.value)
        : undefined;
    const listItem = /\[\d+\]$/.test(field.path);
    const hint =
      quoteHint && scalarText !== undefined
        ? `Quote the value so YAML reads it as text: ${listItem ? '' : `${field.key}: `}"${scalarText}".`
        : `Write ${expected} here.`;
    // Keys stay as written ("retries must be…"); only prose gets a capital ("The pipeline must be…").
    const sentence = expectation.startsWith('the ')
      ? `T${expectation.slice(1)}`
      : expectation;
    const message = `${sentence}; found ${found}.`;
    this.sink.error('wrong_type', field.at, message, hint, field.path);
  }

  error(
    code: PipelineDiagnosticCode,
    field: Field,
    message: string,
    hint: string,
    at: Position = field.at,
  ): void {
    this.sink.error(code, at, message, hint, field.path);
  }

  private unknownKey(
    entry: Field,
    known: readonly string[],
    what: string,
  ): void {
    const suggestion = closest(entry.key, known);
    const merge = entry.key === '<<';
    const message = merge
      ? `YAML merge keys (<<) are not supported in ${what}.`
      : `Unknown key "${entry.key}" in ${what}.${suggestion ? ` Did you mean "${suggestion}"?` : ''}`;
    const hint = merge
      ? 'Repeat the keys, or put an anchor on a whole value and reuse it with an alias (*name).'
      : suggestion
        ? `Rename it to "${suggestion}", or remove it. Allowed keys: ${known.join(', ')}.`
        : `Remove it. Allowed keys: ${known.join(', ')}.`;
    this.sink.error('unknown_key', entry.keyAt, message, hint, entry.path);
  }
}

class PlainValueProblem extends Error {}

export function describe(node: YamlNode | null): string {
  if (node === null) return 'nothing';
  if (isMap(node)) return 'a mapping';
  if (isSeq(node)) return 'a list';
  const v: unknown = node.value;
  if (v === null) return 'an empty value (null)';
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'number') return `the number ${String(v)}`;
  if (typeof v === 'boolean') return `the boolean ${String(v)}`;
  return 'a binary or tagged value';
}

/** The known key nearest to a typo (edit distance, ignoring case, `-` and camelCase), if close. */
export function closest(
  key: string,
  known: readonly string[],
): string | undefined {
  const normal = (s: string): string =>
    s
      .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
      .replace(/-/g, '_')
      .toLowerCase();
  const wanted = normal(key);
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(wanted, normal(candidate));
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  const allowed = wanted.length <= 3 ? 1 : wanted.length <= 6 ? 2 : 3;
  return bestDistance <= allowed ? best : undefined;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 3 || a.length > 64 || b.length > 64)
    return Infinity;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j] + 1,
        current[j - 1] + 1,
        previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length];
}
