import {
  isJobStage,
  loadPipeline,
  type PipelineDiagnostic,
  type StageDefinition,
} from '../../index';
import { isPressKey, screenshotNameProblem } from './steps.reader';

const yaml = (lines: string[]): string => `${lines.join('\n')}\n`;
const summary = (d: PipelineDiagnostic): string => `${d.code} ${d.line}:${d.column}`;

function stepsStage(steps: string[], extra: string[] = []): string {
  return yaml([
    'name: steps',
    'stages:',
    '  - id: look',
    '    browser: { profile: site }',
    ...extra,
    '    steps:',
    ...steps.map((s) => `      - ${s}`),
  ]);
}

describe('steps stages', () => {
  it('reads every action in short and mapping form into the model, with defaults', () => {
    const result = loadPipeline(
      stepsStage([
        'goto: https://x.test/login',
        'goto: { url: "https://x.test/a", timeout_seconds: 5 }',
        'click: "#go"',
        'fill: { selector: "#user", value: "" }',
        'press: Enter',
        'press: { key: "a", selector: "#q" }',
        'wait_for: { selector: "#done" }',
        'wait_for: { url: "*/account*" }',
        'wait_for: { text: Welcome, timeout_seconds: 3 }',
        'extract: { field: name, selector: "#name" }',
        'extract: { field: link, selector: a, attribute: href }',
        'screenshot: page.png',
        'screenshot: { name: full.png, full_page: true }',
      ]),
    );
    expect(result.ok ? [] : result.errors).toEqual([]);
    if (!result.ok) return;
    const stage = result.pipeline.stages[0];
    expect(stage).toMatchObject({ id: 'look', kind: 'steps', browser: { profile: 'site', headed: true } });
    expect(stage.kind === 'steps' && stage.steps).toEqual([
      { action: 'goto', url: 'https://x.test/login' },
      { action: 'goto', url: 'https://x.test/a', timeoutSeconds: 5 },
      { action: 'click', selector: '#go' },
      { action: 'fill', selector: '#user', value: '' },
      { action: 'press', key: 'Enter' },
      { action: 'press', key: 'a', selector: '#q' },
      { action: 'wait_for', condition: 'selector', value: '#done' },
      { action: 'wait_for', condition: 'url', value: '*/account*' },
      { action: 'wait_for', condition: 'text', value: 'Welcome', timeoutSeconds: 3 },
      { action: 'extract', field: 'name', selector: '#name' },
      { action: 'extract', field: 'link', selector: 'a', attribute: 'href' },
      { action: 'screenshot', name: 'page.png', fullPage: false },
      { action: 'screenshot', name: 'full.png', fullPage: true },
    ]);
  });

  it('reports every bad step of a list, not only the first', () => {
    const result = loadPipeline(stepsStage(['goto: ftp://x.test', 'click: ""', 'press: Hyper', 'screenshot: a.gif']));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map(summary)).toEqual([
      'invalid_url 6:15',
      'invalid_value 7:16',
      'invalid_value 8:16',
      'invalid_artifact_name 9:21',
    ]);
    expect(result.errors.map((e) => e.message)).toEqual([
      expect.stringContaining('Step 1 (goto) of stage "look"'),
      expect.stringContaining('step 2 (click) of stage "look"'),
      expect.stringContaining('Step 3 (press) of stage "look"'),
      expect.stringContaining('Step 4 (screenshot) of stage "look"'),
    ]);
  });

  it('accepts an output_schema that fits the extracted fields', () => {
    const result = loadPipeline(
      stepsStage(['extract: { field: name, selector: "#n" }'], [
        '    output_schema:',
        '      type: object',
        '      properties: { name: { type: [string, "null"] } }',
        '      required: [name]',
        '      additionalProperties: false',
      ]),
      { strict: true },
    );
    expect(result.ok ? result.warnings : result.errors).toEqual([]);
  });

  it('does not judge an output_schema built from combinators (the runner still validates)', () => {
    const result = loadPipeline(
      stepsStage(['extract: { field: name, selector: "#n" }'], [
        '    output_schema:',
        '      anyOf: [{ type: object, required: [other], properties: { other: { type: integer } } }]',
      ]),
    );
    expect(result.ok).toBe(true);
  });

  it('lets a child rely on the extracted fields without an output_schema', () => {
    const result = loadPipeline(
      yaml([
        'name: steps',
        'stages:',
        '  - id: look',
        '    browser: {}',
        '    steps:',
        '      - extract: { field: email, selector: "#e" }',
        '  - id: next',
        '    command: echo next',
        '    input_schema: { type: object, properties: { email: { type: string } }, required: [email] }',
        'edges:',
        '  - { from: look, to: next, if: "output.email != \'\'" }',
      ]),
      { strict: true },
    );
    expect(result.ok ? result.warnings : result.errors).toEqual([]);
  });

  it('refuses a verify on a steps stage', () => {
    const result = loadPipeline(stepsStage(['goto: https://x.test'], ['    verify: browser_login']));
    expect(result.ok ? [] : result.errors.map((e) => e.code)).toEqual(['invalid_verify']);
  });

  it.each(['Enter', 'Tab', 'PageDown', 'a', 'Z', '7', ' ', '/', 'é'])('press knows %j', (key) => {
    expect(isPressKey(key)).toBe(true);
  });

  it.each(['', 'enter', 'Control+A', 'ab', '\n', '\u007f', 'F13'])('press refuses %j', (key) => {
    expect(isPressKey(key)).toBe(false);
  });

  it.each([
    ['shot.png', undefined],
    ['shot.PNG', 'ends in ".png"'],
    ['shot', 'ends in ".png"'],
    ['../shot.png', 'path separator'],
    ['.png', 'start with a letter or digit'],
  ])('screenshot name %j', (name, problem) => {
    const found = screenshotNameProblem(name);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toContain(problem);
  });
});

describe('isJobStage', () => {
  const base = { id: 'x', timeoutSeconds: 1, retries: 0 };
  it.each<[StageDefinition, boolean]>([
    [{ ...base, kind: 'run', command: 'true', env: {} }, true],
    [{ ...base, kind: 'steps', browser: { headed: true, allowDomains: [] }, steps: [{ action: 'click', selector: '#x' }] }, true],
    [{ ...base, kind: 'gate', message: 'Go?' }, false],
  ])('%j → %s', (stage, expected) => {
    expect(isJobStage(stage)).toBe(expected);
  });

  it('is false for no stage at all', () => {
    expect(isJobStage(undefined)).toBe(false);
  });
});
