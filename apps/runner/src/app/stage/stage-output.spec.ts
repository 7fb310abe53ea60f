import { SchemaCheck } from '@stageflow/engine';
import { judgeOutput, MAX_OUTPUT_BYTES } from './stage-output';

describe('judgeOutput', () => {
  const schemas = new SchemaCheck();
  const schema = { type: 'object', required: ['url'], properties: { url: { type: 'string' } } };

  it('reads no output file as {}', () => {
    expect(judgeOutput(undefined, undefined, schemas)).toEqual({ ok: true, output: {} });
  });

  it('fails on text that is not JSON (an empty file included)', () => {
    expect(judgeOutput('{"a":', undefined, schemas)).toMatchObject({ ok: false, error: expect.stringMatching(/^output file is not valid JSON/) });
    expect(judgeOutput('', undefined, schemas).ok).toBe(false);
  });

  it('checks the output schema and names the field', () => {
    expect(judgeOutput('{"url": "https://x.test"}', schema, schemas)).toEqual({ ok: true, output: { url: 'https://x.test' } });
    expect(judgeOutput('{"url": 3}', schema, schemas)).toEqual({
      ok: false,
      error: 'output does not match output_schema: /url must be string',
    });
    // No file is {} and still has to fit the schema.
    expect(judgeOutput(undefined, schema, schemas)).toEqual({ ok: false, error: 'output does not match output_schema: /url is required' });
  });

  it('refuses outputs over the size cap', () => {
    const big = JSON.stringify({ blob: 'x'.repeat(MAX_OUTPUT_BYTES) });
    expect(judgeOutput(big, undefined, schemas)).toEqual({ ok: false, error: `output file is larger than ${MAX_OUTPUT_BYTES} bytes` });
  });

  it('adds the Host\'s fields over the stage\'s own object output, before the schema check', () => {
    const login = { logged_in: false, url: 'https://x.test/login' };
    expect(judgeOutput(undefined, schema, schemas, login)).toEqual({ ok: true, output: login });
    expect(judgeOutput('{"note": 1, "logged_in": true}', undefined, schemas, login)).toEqual({ ok: true, output: { note: 1, ...login } });
    expect(judgeOutput('[1]', undefined, schemas, login)).toEqual({
      ok: false,
      error: 'output must be a JSON object, because the Host adds logged_in, url to it',
    });
  });
});
