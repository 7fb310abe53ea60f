import type { JsonSchema } from '../pipeline.model';

type SchemaObject = Record<string, unknown>;

/** Keywords that combine or point elsewhere; a level using them is not judged. */
const OPAQUE = [
  '$ref',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
  'dependencies',
];
const MAX_DEPTH = 16;

/**
 * Definite reasons why a value valid against `output` (a parent's
 * output_schema) can be rejected by `input` (a child's input_schema). Empty
 * when no conflict is visible.
 *
 * Structural and conservative: it compares `type` (integer counts as number),
 * `required`, `properties` (recursively), `additionalProperties: false`,
 * `enum`/`const` and array `items`. Levels that use `$ref` or combinators
 * (`allOf`, `anyOf`, `oneOf`, `not`, `if`) are not judged, nor are ranges,
 * lengths, patterns or formats; the runner still validates every input.
 */
export function schemaMismatches(
  output: JsonSchema,
  input: JsonSchema,
): string[] {
  const problems: string[] = [];
  compareLevel(output, input, '', 0, problems);
  return problems;
}

function compareLevel(
  output: JsonSchema | undefined,
  input: JsonSchema | undefined,
  at: string,
  depth: number,
  problems: string[],
): void {
  if (depth > MAX_DEPTH || output === undefined || input === undefined) return;
  const where = at === '' ? 'the output' : `"${at}"`;
  if (input === false) {
    problems.push(
      `input_schema${at ? ` of "${at}"` : ''} is false, so it accepts nothing`,
    );
    return;
  }
  if (input === true || output === false || output === true) return;
  if (!isSchemaObject(output) || !isSchemaObject(input)) return;
  if (OPAQUE.some((k) => Object.hasOwn(output, k) || Object.hasOwn(input, k)))
    return;

  const outTypes = typesOf(output);
  const inTypes = typesOf(input);
  if (outTypes && inTypes) {
    const rejected = outTypes.filter(
      (t) =>
        !inTypes.includes(t) &&
        !(t === 'integer' && inTypes.includes('number')),
    );
    if (rejected.length > 0) {
      problems.push(
        `${where} is ${rejected.join(' or ')}, but input_schema expects ${inTypes.join(' or ')}${at ? ` for "${at}"` : ''}`,
      );
      return;
    }
  }

  const outValues = valuesOf(output);
  const inValues = valuesOf(input);
  if (outValues && inValues) {
    const extra = outValues.filter(
      (v) => !inValues.some((w) => JSON.stringify(w) === JSON.stringify(v)),
    );
    if (extra.length > 0) {
      problems.push(
        `${where} can be ${extra.map((v) => JSON.stringify(v)).join(', ')}, which input_schema does not allow`,
      );
    }
  }

  if (
    isObjectSchema(input) &&
    isObjectSchema(output) &&
    !(outTypes && !outTypes.includes('object'))
  ) {
    const outProps = propertiesOf(output);
    const inProps = propertiesOf(input);
    const outRequired = requiredOf(output);
    for (const name of requiredOf(input)) {
      const path = at ? `${at}.${name}` : name;
      if (!outProps.has(name)) {
        problems.push(
          `"${path}" is required by input_schema but not declared in output_schema`,
        );
      } else if (!outRequired.includes(name)) {
        problems.push(
          `"${path}" is required by input_schema but optional in output_schema`,
        );
      }
    }
    for (const [name, inProp] of inProps) {
      compareLevel(
        outProps.get(name),
        inProp,
        at ? `${at}.${name}` : name,
        depth + 1,
        problems,
      );
    }
    if (input['additionalProperties'] === false) {
      for (const name of outProps.keys()) {
        if (!inProps.has(name)) {
          problems.push(
            `output_schema declares "${at ? `${at}.${name}` : name}", which input_schema forbids (additionalProperties: false)`,
          );
        }
      }
    }
  }

  const outItems = output['items'];
  const inItems = input['items'];
  if (isSchema(outItems) && isSchema(inItems))
    compareLevel(outItems, inItems, at ? `${at}[]` : '[]', depth + 1, problems);
}

function isSchemaObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'boolean' || isSchemaObject(value);
}

function typesOf(schema: SchemaObject): string[] | undefined {
  const type = schema['type'];
  if (typeof type === 'string') return [type];
  if (Array.isArray(type) && type.every((t) => typeof t === 'string'))
    return type as string[];
  return undefined;
}

function valuesOf(schema: SchemaObject): unknown[] | undefined {
  if (Object.hasOwn(schema, 'const')) return [schema['const']];
  const values = schema['enum'];
  return Array.isArray(values) ? values : undefined;
}

function isObjectSchema(schema: SchemaObject): boolean {
  const types = typesOf(schema);
  return types
    ? types.includes('object')
    : Object.hasOwn(schema, 'properties') || Object.hasOwn(schema, 'required');
}

function propertiesOf(schema: SchemaObject): Map<string, JsonSchema> {
  const props = schema['properties'];
  const out = new Map<string, JsonSchema>();
  if (!isSchemaObject(props)) return out;
  for (const [name, value] of Object.entries(props))
    if (isSchema(value)) out.set(name, value);
  return out;
}

function requiredOf(schema: SchemaObject): string[] {
  const required = schema['required'];
  return Array.isArray(required)
    ? required.filter((r): r is string => typeof r === 'string')
    : [];
}
