import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { StageflowError } from '@stageflow/contracts';
import fc from 'fast-check';
import { stringify } from 'yaml';
import {
  loadPipeline,
  loadPipelineOrThrow,
  PipelineInvalidError,
  type PipelineDiagnostic,
  type PipelineLoadResult,
} from '../../index';

const yaml = (lines: string[]): string => `${lines.join('\n')}\n`;
const errorsOf = (r: PipelineLoadResult): PipelineDiagnostic[] =>
  r.ok ? [] : r.errors;
const codes = (ds: PipelineDiagnostic[]): string[] =>
  ds.map((d) => `${d.code} ${d.line}:${d.column}`);

/** check → login → work stages; `checkToWorkIf` puts an if on every check → work edge (the wrong shape). */
function loginPipeline(work: string[], checkToWorkIf?: string): string {
  return yaml([
    'name: login-flow',
    'stages:',
    '  - id: check',
    '    command: echo check',
    '  - id: login',
    '    message: Log in, then accept.',
    ...work.flatMap((id) => [`  - id: ${id}`, `    command: echo ${id}`]),
    'edges:',
    '  - { from: check, to: login, if: "not output.logged_in" }',
    ...work.flatMap((id) => [
      checkToWorkIf
        ? `  - { from: check, to: ${id}, if: "${checkToWorkIf}" }`
        : `  - { from: check, to: ${id} }`,
      `  - { from: login, to: ${id} }`,
    ]),
  ]);
}

describe('loadPipeline', () => {
  it('fills every default and infers the stage kind', () => {
    const result = loadPipeline(
      yaml([
        'name: defaults',
        'stages:',
        '  - { id: a, command: echo a, browser: {} }',
        '  - { id: g, message: Go? }',
      ]),
    );
    expect(result).toEqual({
      ok: true,
      warnings: [],
      pipeline: {
        version: 1,
        name: 'defaults',
        maxActiveStages: 4,
        stages: [
          {
            id: 'a',
            kind: 'run',
            command: 'echo a',
            env: {},
            timeoutSeconds: 600,
            retries: 0,
            browser: { headed: true, allowDomains: [] },
          },
          {
            id: 'g',
            kind: 'gate',
            message: 'Go?',
            timeoutSeconds: 600,
            retries: 0,
          },
        ],
        edges: [],
      },
    });
  });

  it('keeps the if text and its parsed condition on the edge', () => {
    const result = loadPipeline(
      yaml([
        'name: e',
        'stages: [{ id: a, command: a }, { id: b, command: b }]',
        'edges:',
        '  - { from: a, to: b, if: "output.n > 1" }',
      ]),
    );
    expect(result.ok && result.pipeline.edges).toEqual([
      {
        from: 'a',
        to: 'b',
        if: 'output.n > 1',
        condition: {
          type: 'compare',
          op: '>',
          left: { type: 'path', root: 'output', path: ['n'] },
          right: { type: 'literal', value: 1 },
        },
      },
    ]);
  });

  it('lower-cases allowed domains and keeps argv commands as lists', () => {
    const result = loadPipeline(
      yaml([
        'name: b',
        'stages:',
        '  - id: a',
        '    command: [node, "x.js", ""]',
        '    browser: { allow_domains: [Example.COM, "*.Test.dev"] }',
      ]),
    );
    expect(result.ok && result.pipeline.stages[0]).toMatchObject({
      command: ['node', 'x.js', ''],
      browser: { allowDomains: ['example.com', '*.test.dev'] },
    });
  });

  it('names the file in every diagnostic, <inline> by default', () => {
    expect(errorsOf(loadPipeline('name: [')).map((d) => d.file)).toEqual([
      '<inline>',
    ]);
    expect(
      errorsOf(loadPipeline('name: [', { file: 'ci/build.pipeline.yaml' }))[0]
        .file,
    ).toBe('ci/build.pipeline.yaml');
  });

  it('reports every problem, sorted by line, with a path', () => {
    const result = loadPipeline(
      yaml([
        'name: Bad Name',
        'stages:',
        '  - id: a',
        '    command: echo',
        '    retries: 99',
        '    timeoutSeconds: 5',
        'edges:',
        '  - { from: a, to: zz }',
      ]),
    );
    expect(codes(errorsOf(result))).toEqual([
      'invalid_value 1:7',
      'invalid_value 5:14',
      'unknown_key 6:5',
      'unknown_stage_reference 8:20',
    ]);
    expect(errorsOf(result).map((d) => d.path)).toEqual([
      'name',
      'stages[0].retries',
      'stages[0].timeoutSeconds',
      undefined,
    ]);
    expect(errorsOf(result)[2].message).toContain(
      'Did you mean "timeout_seconds"?',
    );
  });

  it('reports positions correctly with CRLF line endings', () => {
    const result = loadPipeline(
      'name: crlf\r\nstages:\r\n  - id: a\r\n    command: echo\r\n    retries: -1\r\n',
    );
    expect(codes(errorsOf(result))).toEqual(['invalid_value 5:14']);
  });

  describe('condition positions', () => {
    const withIf = (ifLine: string): PipelineDiagnostic => {
      const source = yaml([
        'name: c',
        'stages: [{ id: a, command: a }, { id: b, command: b }]',
        'edges:',
        '  - from: a',
        '    to: b',
        ifLine,
      ]);
      return errorsOf(loadPipeline(source))[0];
    };

    it('points inside a plain one-line value', () => {
      expect(withIf('    if: output.a ==')).toMatchObject({
        code: 'invalid_condition',
        line: 6,
        column: 20,
      });
    });

    it('points inside a quoted value without escapes', () => {
      // The second "==" is column 13 of the expression; the expression starts after the quote at column 9.
      expect(withIf(`    if: 'output.a == =='`)).toMatchObject({
        line: 6,
        column: 22,
      });
      expect(withIf('    if: "output.a == =="')).toMatchObject({
        line: 6,
        column: 22,
      });
    });

    it('points at the value when escapes shift the columns', () => {
      expect(withIf(String.raw`    if: "output.a == \"x\" =="`)).toMatchObject({
        line: 6,
        column: 9,
      });
    });
  });

  describe('join topology', () => {
    it('loads check → login → work with if only on check → login, with no warning', () => {
      for (const work of [['work'], ['orders', 'invoices', 'reports']]) {
        const result = loadPipeline(loginPipeline(work), { strict: true });
        expect(result.warnings).toEqual([]);
        expect(result.ok).toBe(true);
      }
    });

    it('warns when check → work also has an if, naming the stages and the fix', () => {
      const result = loadPipeline(loginPipeline(['work'], 'output.logged_in'));
      expect(result.ok).toBe(true);
      expect(result.warnings).toHaveLength(1);
      const [warning] = result.warnings;
      expect(warning).toMatchObject({
        code: 'join_skips_work',
        severity: 'warning',
        line: 11,
        column: 34,
      });
      expect(warning.message).toContain('"work" joins "check" and "login"');
      expect(warning.message).toContain('skipped silently');
      expect(warning.hint).toContain(
        'Keep the if only on check → login; remove it from check → work.',
      );
    });

    it('makes the wrong shape an error under strict, once per work stage', () => {
      const result = loadPipeline(
        loginPipeline(['a', 'b'], 'output.logged_in'),
        { strict: true },
      );
      expect(result.ok).toBe(false);
      expect(result.warnings).toEqual([]);
      expect(errorsOf(result).map((d) => [d.code, d.severity])).toEqual([
        ['join_skips_work', 'error'],
        ['join_skips_work', 'error'],
      ]);
    });

    it('rejects the wrong shape, strict or not, when the branch is a human login gate (the work logged in for would never run)', () => {
      const example = readFileSync(join(__dirname, '../../../../../examples/browser-session/pipeline.yaml'), 'utf8');
      expect(loadPipeline(example, { strict: true }).ok).toBe(true);
      const wrong = example.replace('  - { from: check, to: orders }', '  - { from: check, to: orders, if: "output.logged_in" }');
      expect(wrong).not.toBe(example);
      const result = loadPipeline(wrong);
      expect(result.ok).toBe(false);
      expect(errorsOf(result).map((d) => [d.code, d.severity])).toEqual([['join_skips_work', 'error']]);
      expect(errorsOf(result)[0].message).toContain('"orders" joins "check" and "login"');
    });

    it('finds the wrong shape when the conditional branch is longer', () => {
      const source = yaml([
        'name: long',
        'stages: [{ id: check, command: c }, { id: prep, command: p }, { id: login, message: m }, { id: work, command: w }]',
        'edges:',
        '  - { from: check, to: prep, if: "not output.ok" }',
        '  - { from: prep, to: login }',
        '  - { from: login, to: work }',
        '  - { from: check, to: work, if: "output.ok" }',
      ]);
      const [warning] = loadPipeline(source).warnings;
      expect(warning.code).toBe('join_skips_work');
      expect(warning.hint).toContain(
        'Keep the if only on check → prep; remove it from check → work.',
      );
    });

    it('does not warn about a conditional join whose other parent always runs', () => {
      const source = yaml([
        'name: plain-join',
        'stages: [{ id: a, command: a }, { id: b, command: b }, { id: j, command: j }]',
        'edges:',
        '  - { from: a, to: b }',
        '  - { from: b, to: j }',
        '  - { from: a, to: j, if: "output.ok" }',
      ]);
      expect(loadPipeline(source, { strict: true })).toMatchObject({
        ok: true,
        warnings: [],
      });
    });
  });

  describe('reachability', () => {
    it('accepts an always-false edge when its parent can be skipped and another parent runs', () => {
      const source = yaml([
        'name: reach',
        'stages: [{ id: r, command: r }, { id: x, command: x }, { id: y, command: y }, { id: z, command: z }]',
        'edges:',
        '  - { from: r, to: x, if: "output.ok" }',
        '  - { from: r, to: y, if: "not output.ok" }',
        '  - { from: x, to: z, if: "false" }',
        '  - { from: y, to: z }',
      ]);
      expect(loadPipeline(source).ok).toBe(true);
    });

    it('does not run graph checks on a graph with unknown references (no follow-on noise)', () => {
      const source = yaml([
        'name: r',
        'stages: [{ id: a, command: a }, { id: b, command: b }]',
        'edges:',
        '  - { from: a, to: nope }',
        '  - { from: a, to: b, if: "false" }',
      ]);
      expect(codes(errorsOf(loadPipeline(source)))).toEqual([
        'unknown_stage_reference 4:20',
      ]);
    });
  });

  it('reports a YAML warning (unknown tag) as a warning unless strict', () => {
    const source = yaml([
      'name: t',
      'stages:',
      '  - { id: a, command: !sh echo }',
    ]);
    expect(loadPipeline(source)).toMatchObject({
      ok: true,
      warnings: [{ code: 'yaml_warning', line: 3, column: 23 }],
    });
    expect(loadPipeline(source, { strict: true })).toMatchObject({
      ok: false,
      errors: [{ code: 'yaml_warning', severity: 'error' }],
    });
  });

  it('resolves anchors and aliases for reused blocks', () => {
    const source = yaml([
      'name: anchors',
      'stages:',
      '  - { id: a, command: a, env: &env { MODE: fast } }',
      '  - { id: b, command: b, env: *env }',
    ]);
    const result = loadPipeline(source);
    expect(
      result.ok && result.pipeline.stages.map((s) => s.kind === 'run' && s.env),
    ).toEqual([{ MODE: 'fast' }, { MODE: 'fast' }]);
  });

  it('treats keys named like Object.prototype members as ordinary keys', () => {
    const source = yaml([
      'name: proto',
      'valueOf: 1',
      'stages:',
      '  - id: a',
      '    command: echo',
      '    constructor: x',
      '    env: { __proto__: polluted, toString: ok }',
      '    browser: { valueOf: 1, __proto__: {} }',
      'edges:',
      '  - { from: a, to: a, hasOwnProperty: 1 }',
    ]);
    expect(codes(errorsOf(loadPipeline(source)))).toEqual([
      'unknown_key 2:1',
      'unknown_key 6:5',
      'unknown_key 8:16',
      'unknown_key 8:28',
      'cycle 10:5',
      'unknown_key 10:23',
    ]);
    const env = loadPipeline(
      yaml([
        'name: env',
        'stages:',
        '  - { id: a, command: x, env: { __proto__: kept } }',
      ]),
    );
    expect(
      env.ok &&
        env.pipeline.stages[0].kind === 'run' &&
        Object.entries(env.pipeline.stages[0].env),
    ).toEqual([['__proto__', 'kept']]);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  describe('never throws on hostile input', () => {
    it.each([
      ['null', null],
      ['a number', 42],
      ['undefined', undefined],
      ['an object', { name: 'x' }],
    ])('reports %s as wrong_type', (_name, input) => {
      expect(codes(errorsOf(loadPipeline(input as unknown as string)))).toEqual(
        ['wrong_type 1:1'],
      );
    });

    it('refuses input over 1 MiB before parsing it', () => {
      const big = `name: big\n# ${'x'.repeat(1024 * 1024)}\n`;
      const started = Date.now();
      expect(codes(errorsOf(loadPipeline(big)))).toEqual([
        'input_too_large 1:1',
      ]);
      expect(Date.now() - started).toBeLessThan(1000);
    });

    it('counts bytes, not characters, toward the limit', () => {
      const source = `name: wide\n# ${'é'.repeat(600 * 1024)}\n`;
      expect(source.length).toBeLessThan(1024 * 1024);
      expect(codes(errorsOf(loadPipeline(source)))).toEqual([
        'input_too_large 1:1',
      ]);
    });

    it('survives deep nesting', () => {
      expect(errorsOf(loadPipeline('['.repeat(50_000)))[0].code).toBe(
        'yaml_syntax',
      );
      expect(
        errorsOf(
          loadPipeline(
            `name: deep\nstages:\n  - id: a\n    command: a\n    input_schema: ${'{a: '.repeat(2000)}1${'}'.repeat(2000)}\n`,
          ),
        )[0].code,
      ).toBeDefined();
    });

    it('stops alias bombs', () => {
      const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
      for (let i = 1; i < 9; i++)
        bomb.push(
          `a${i}: &a${i} [${`*${i === 1 ? 'a' : `a${i - 1}`}, `.repeat(10)}]`,
        );
      const started = Date.now();
      expect(codes(errorsOf(loadPipeline(yaml(bomb))))).toEqual([
        'yaml_alias_limit 1:1',
      ]);
      expect(Date.now() - started).toBeLessThan(3000);
    });

    it('returns a result for any text', () => {
      fc.assert(
        fc.property(fc.string({ unit: 'binary', maxLength: 400 }), (text) => {
          const result = loadPipeline(text);
          expect(typeof result.ok).toBe('boolean');
          expect(
            errorsOf(result).every((d) => d.code !== 'internal_error'),
          ).toBe(true);
        }),
        { numRuns: 500 },
      );
    });

    it('returns a result for any YAML value, in and around the pipeline shape', () => {
      const near = fc.record(
        {
          name: fc.oneof(fc.constant('p'), fc.jsonValue({ maxDepth: 3 })),
          stages: fc.array(
            fc.record(
              {
                id: fc.oneof(
                  fc.constantFrom('a', 'b', 'c'),
                  fc.jsonValue({ maxDepth: 3 }),
                ),
                command: fc.oneof(
                  fc.constant('x'),
                  fc.jsonValue({ maxDepth: 3 }),
                ),
                message: fc.jsonValue({ maxDepth: 3 }),
                kind: fc.constantFrom('run', 'gate', 'x'),
                env: fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })),
                browser: fc.jsonValue({ maxDepth: 3 }),
                input_schema: fc.jsonValue({ maxDepth: 3 }),
                output_schema: fc.jsonValue({ maxDepth: 3 }),
                verify: fc.constantFrom('browser_login', 'x'),
              },
              { requiredKeys: ['id'] },
            ),
            { maxLength: 4 },
          ),
          edges: fc.array(
            fc.record(
              {
                from: fc.constantFrom('a', 'b', 'c', 'd'),
                to: fc.constantFrom('a', 'b', 'c'),
                if: fc.string(),
              },
              { requiredKeys: ['from', 'to'] },
            ),
            {
              maxLength: 6,
            },
          ),
        },
        { requiredKeys: [] },
      );
      fc.assert(
        fc.property(fc.oneof(near, fc.jsonValue({ maxDepth: 3 })), (value) => {
          const result = loadPipeline(stringify(value));
          expect(typeof result.ok).toBe('boolean');
          expect(
            errorsOf(result).every((d) => d.code !== 'internal_error'),
          ).toBe(true);
        }),
        { numRuns: 200 },
      );
    });
  });
});

describe('loadPipelineOrThrow', () => {
  it('returns the pipeline when it is valid', () => {
    expect(
      loadPipelineOrThrow('name: ok\nstages: [{ id: a, command: a }]\n').name,
    ).toBe('ok');
  });

  it('throws PipelineInvalidError (422, pipeline_invalid) with every diagnostic', () => {
    let thrown: unknown;
    try {
      loadPipelineOrThrow(
        'name: x\nstages:\n  - { id: a, command: 1 }\n  - { id: a, command: b }\n',
        { file: 'p.yaml' },
      );
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(PipelineInvalidError);
    expect(thrown).toBeInstanceOf(StageflowError);
    const error = thrown as PipelineInvalidError;
    expect(error.code).toBe('pipeline_invalid');
    expect(error.status).toBe(422);
    expect(error.message).toBe(
      'p.yaml:3:23: command must be a string (run by /bin/sh -c) or a list of strings (argv); found the number 1. (and 1 more)',
    );
    expect(codes(error.details.errors)).toEqual([
      'wrong_type 3:23',
      'duplicate_stage_id 4:11',
    ]);
    expect(error.details.warnings).toEqual([]);
  });
});
