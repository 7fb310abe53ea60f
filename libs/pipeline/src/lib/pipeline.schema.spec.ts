import Ajv from 'ajv';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { PIPELINE_JSON_SCHEMA } from '../index';

const DOCS_SCHEMA = resolve(__dirname, '../../../../docs/pipeline.schema.json');

describe('PIPELINE_JSON_SCHEMA', () => {
  it('is the same as docs/pipeline.schema.json', () => {
    // On failure, regenerate the docs file: JSON.stringify(PIPELINE_JSON_SCHEMA, null, 2) + '\n'.
    const onDisk = readFileSync(DOCS_SCHEMA, 'utf8');
    expect(JSON.parse(onDisk)).toEqual(PIPELINE_JSON_SCHEMA);
    expect(onDisk).toBe(`${JSON.stringify(PIPELINE_JSON_SCHEMA, null, 2)}\n`);
  });

  it('is a valid draft-07 schema', () => {
    const ajv = new Ajv({
      strict: true,
      strictTypes: false,
      strictRequired: false,
    });
    expect(PIPELINE_JSON_SCHEMA['$schema']).toBe(
      'http://json-schema.org/draft-07/schema#',
    );
    expect(() => ajv.compile(PIPELINE_JSON_SCHEMA)).not.toThrow();
  });

  describe('agrees with the loader on shape rules', () => {
    const validate = new Ajv({ strict: false }).compile(PIPELINE_JSON_SCHEMA);
    const stage = { id: 'a', command: 'echo a' };
    const pipeline = (
      stages: unknown[],
      extra: Record<string, unknown> = {},
    ) => ({ name: 'p', stages, ...extra });

    it.each([
      ['a minimal pipeline', pipeline([stage])],
      ['a gate inferred from message', pipeline([{ id: 'g', message: 'Go?' }])],
      ['argv commands', pipeline([{ id: 'a', command: ['node', 'x.js'] }])],
      [
        'a human login gate',
        pipeline([
          {
            id: 'l',
            kind: 'gate',
            message: 'Log in',
            verify: 'browser_login',
            browser: {
              profile: 'p',
              check: { url: 'https://x.test', cookie: 's' },
            },
          },
        ]),
      ],
      [
        'a steps stage in short and mapping forms',
        pipeline([
          {
            id: 's',
            kind: 'steps',
            browser: { profile: 'p' },
            steps: [
              { goto: 'https://x.test/login' },
              { fill: { selector: '#u', value: '' } },
              { click: '#go' },
              { press: { key: 'Enter', selector: '#q', timeout_seconds: 5 } },
              { wait_for: { url: '*/account*' } },
              { extract: { field: 'name', selector: '#n', attribute: 'title' } },
              { screenshot: { name: 'a.png', full_page: true } },
            ],
          },
        ]),
      ],
      [
        'a steps stage inferred from steps',
        pipeline([{ id: 's', browser: {}, steps: [{ screenshot: 'a.png' }] }]),
      ],
      [
        'an edge with if',
        pipeline([stage, { id: 'b', command: 'b' }], {
          edges: [{ from: 'a', to: 'b', if: 'output.ok' }],
        }),
      ],
    ])('accepts %s', (_name, doc) => {
      expect(validate(doc)).toBe(true);
    });

    it.each([
      ['no stages', pipeline([])],
      ['an unknown key', pipeline([{ ...stage, timeout: 5 }])],
      [
        'a host launch option in browser',
        pipeline([{ ...stage, browser: { launch_args: ['--x'] } }]),
      ],
      [
        'a profile that is a path',
        pipeline([{ ...stage, browser: { profile: '../x' } }]),
      ],
      [
        'a profile with ..',
        pipeline([{ ...stage, browser: { profile: 'a..b' } }]),
      ],
      [
        'a gate with a command',
        pipeline([{ id: 'g', kind: 'gate', message: 'm', command: 'x' }]),
      ],
      ['a run stage without command', pipeline([{ id: 'r', kind: 'run' }])],
      [
        'command and message without kind',
        pipeline([{ id: 'x', command: 'c', message: 'm' }]),
      ],
      [
        'a reserved env key',
        pipeline([{ ...stage, env: { STAGEFLOW_X: '1' } }]),
      ],
      ['a number env value', pipeline([{ ...stage, env: { X: 1 } }])],
      [
        'a check without criterion',
        pipeline([
          {
            ...stage,
            browser: { profile: 'p', check: { url: 'https://x.test' } },
          },
        ]),
      ],
      [
        'verify without a check',
        pipeline([
          {
            id: 'l',
            kind: 'gate',
            message: 'm',
            verify: 'browser_login',
            browser: { profile: 'p' },
          },
        ]),
      ],
      ['version 2', pipeline([stage], { version: 2 })],
      [
        'a steps stage without a browser',
        pipeline([{ id: 's', kind: 'steps', steps: [{ click: '#x' }] }]),
      ],
      [
        'a steps stage with a command',
        pipeline([
          { id: 's', kind: 'steps', command: 'x', browser: {}, steps: [{ click: '#x' }] },
        ]),
      ],
      [
        'an empty steps list',
        pipeline([{ id: 's', browser: {}, steps: [] }]),
      ],
      [
        'a step with two actions',
        pipeline([
          { id: 's', browser: {}, steps: [{ goto: 'https://x.test', click: '#x' }] },
        ]),
      ],
      [
        'an unknown action',
        pipeline([{ id: 's', browser: {}, steps: [{ clik: '#x' }] }]),
      ],
      [
        'a screenshot name that is a path',
        pipeline([{ id: 's', browser: {}, steps: [{ screenshot: '../a.png' }] }]),
      ],
      [
        'a wait_for with two conditions',
        pipeline([
          { id: 's', browser: {}, steps: [{ wait_for: { text: 'a', selector: '#b' } }] },
        ]),
      ],
      [
        'steps and command without kind',
        pipeline([{ id: 's', command: 'x', browser: {}, steps: [{ click: '#x' }] }]),
      ],
      [
        'a domain with a scheme',
        pipeline([
          { ...stage, browser: { allow_domains: ['https://x.test'] } },
        ]),
      ],
    ])('rejects %s', (_name, doc) => {
      expect(validate(doc)).toBe(false);
    });
  });
});
