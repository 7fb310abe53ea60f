import { schemaMismatches } from './schema-compat';

const object = (
  properties: Record<string, unknown>,
  required: string[] = [],
  extra: Record<string, unknown> = {},
) => ({
  type: 'object',
  properties,
  required,
  ...extra,
});

describe('schemaMismatches (output of a parent vs input of a child)', () => {
  it('accepts an output that guarantees every required input property with a compatible type', () => {
    const output = object(
      {
        logged_in: { type: 'boolean' },
        url: { type: 'string' },
        n: { type: 'integer' },
      },
      ['logged_in', 'url', 'n'],
    );
    const input = object(
      { logged_in: { type: 'boolean' }, n: { type: 'number' } },
      ['logged_in'],
    );
    expect(schemaMismatches(output, input)).toEqual([]);
  });

  it('reports a required property the output does not declare, or only declares as optional', () => {
    expect(
      schemaMismatches(
        object({ a: { type: 'string' } }),
        object({ a: { type: 'string' }, b: {} }, ['a', 'b']),
      ),
    ).toEqual([
      '"a" is required by input_schema but optional in output_schema',
      '"b" is required by input_schema but not declared in output_schema',
    ]);
  });

  it('reports incompatible types, also in nested objects and list items', () => {
    const output = object(
      {
        user: object({ id: { type: 'string' } }, ['id']),
        tags: { type: 'array', items: { type: 'number' } },
      },
      ['user', 'tags'],
    );
    const input = object(
      {
        user: object({ id: { type: 'integer' } }, ['id']),
        tags: { type: 'array', items: { type: 'string' } },
      },
      ['user'],
    );
    expect(schemaMismatches(output, input)).toEqual([
      '"user.id" is string, but input_schema expects integer for "user.id"',
      '"tags[]" is number, but input_schema expects string for "tags[]"',
    ]);
  });

  it('reports a whole output of the wrong type', () => {
    expect(schemaMismatches({ type: 'array' }, { type: 'object' })).toEqual([
      'the output is array, but input_schema expects object',
    ]);
  });

  it('reports values outside an input enum', () => {
    expect(
      schemaMismatches(
        object({ mode: { enum: ['a', 'b'] } }, ['mode']),
        object({ mode: { enum: ['a'] } }, ['mode']),
      ),
    ).toEqual(['"mode" can be "b", which input_schema does not allow']);
    expect(
      schemaMismatches(
        object({ ok: { const: true } }, ['ok']),
        object({ ok: { const: true } }, ['ok']),
      ),
    ).toEqual([]);
  });

  it('reports output properties a closed input forbids', () => {
    expect(
      schemaMismatches(
        object({ a: {}, b: {} }, ['a']),
        object({ a: {} }, ['a'], { additionalProperties: false }),
      ),
    ).toEqual([
      'output_schema declares "b", which input_schema forbids (additionalProperties: false)',
    ]);
  });

  it('treats boolean schemas as any / nothing', () => {
    expect(schemaMismatches(true, true)).toEqual([]);
    expect(schemaMismatches(object({}), true)).toEqual([]);
    expect(schemaMismatches(false, object({ a: {} }, ['a']))).toEqual([]);
    expect(schemaMismatches(object({}), false)).toEqual([
      'input_schema is false, so it accepts nothing',
    ]);
  });

  it('does not judge what it cannot see: $ref, combinators, an output of any shape', () => {
    expect(
      schemaMismatches({ $ref: '#/definitions/x' }, object({ a: {} }, ['a'])),
    ).toEqual([]);
    expect(
      schemaMismatches(object({}), { anyOf: [object({ a: {} }, ['a'])] }),
    ).toEqual([]);
    expect(schemaMismatches(true, object({ a: {} }, ['a']))).toEqual([]);
  });

  it('is not fooled by property names that exist on Object.prototype', () => {
    expect(
      schemaMismatches(
        object({}),
        object({ constructor: {} }, ['constructor']),
      ),
    ).toEqual([
      '"constructor" is required by input_schema but not declared in output_schema',
    ]);
  });
});
