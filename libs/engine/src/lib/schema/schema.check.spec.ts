import { SchemaCheck, schemaMismatch } from './schema.check';

describe('SchemaCheck', () => {
  const check = new SchemaCheck();
  const schema = {
    type: 'object',
    required: ['url', 'count'],
    additionalProperties: false,
    properties: { url: { type: 'string', format: 'uri' }, count: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } },
  };

  it('accepts a value that fits', () => {
    expect(check.problems(schema, { url: 'https://example.test/', count: 2 })).toEqual([]);
  });

  it('names every field that does not fit (allErrors)', () => {
    expect(check.problems(schema, { url: 'not a url', tags: ['a', 3], extra: true })).toEqual([
      '/count is required',
      '/extra is not allowed',
      '/url must match format "uri"',
      '/tags/1 must be string',
    ]);
  });

  it('says "/" for the whole value', () => {
    expect(check.problems({ type: 'object' }, 'text')).toEqual(['/ must be object']);
    expect(check.problems(false, {})).toEqual(['/ boolean schema is false']);
  });

  it('lets two schemas share an $id', () => {
    expect(check.problems({ $id: 'x', type: 'string' }, 'a')).toEqual([]);
    expect(check.problems({ $id: 'x', type: 'number' }, 'a')).toEqual(['/ must be number']);
  });

  it('formats one line for an event', () => {
    expect(schemaMismatch('output', ['/count must be integer'])).toBe('output does not match output_schema: /count must be integer');
  });
});
