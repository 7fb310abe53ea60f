import type { JsonSchema } from '../pipeline.model';
import type { Position } from '../loader/diagnostic.sink';
import type { Field, YamlNodeReader } from '../loader/yaml-node.reader';

/** Keywords that combine or point elsewhere: a schema using them at the top is not judged here (the runner still validates). */
const OPAQUE = ['$ref', 'allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', 'dependencies'];

const HINT =
  'The output of a steps stage is an object holding exactly the fields its extract steps write, each a string. Make output_schema describe that, or add the missing extract step.';

/**
 * A `steps` stage's output is known before it runs: an object of its
 * `extract` fields, each a string. Reports an `output_schema` that output
 * can never fit (`steps_output_mismatch`), so the mistake shows at load time
 * rather than after the browser work is done.
 */
export function checkStepsOutputSchema(
  reader: YamlNodeReader,
  schemaField: Field,
  schema: JsonSchema,
  fields: ReadonlyArray<{ name: string; at: Position }>,
  stage: string,
): void {
  const report = (message: string, at: Position = schemaField.keyAt): void =>
    reader.error('steps_output_mismatch', schemaField, message, HINT, at);
  if (schema === true) return;
  if (schema === false) {
    report(`output_schema of steps stage "${stage}" is false, so no output fits it and the stage always fails.`);
    return;
  }
  if (OPAQUE.some((k) => Object.hasOwn(schema, k))) return;
  const types = typesOf(schema['type']);
  if (types && !types.includes('object')) {
    report(
      `output_schema of steps stage "${stage}" wants ${types.join(' or ')}, but the stage's output is an object of its extracted fields.`,
      reader.positionOf(schemaField, ['type']),
    );
    return;
  }
  const properties = isObject(schema['properties']) ? schema['properties'] : {};
  const closed = schema['additionalProperties'] === false && !Object.hasOwn(schema, 'patternProperties');
  for (const field of fields) {
    if (!Object.hasOwn(properties, field.name)) {
      if (closed) {
        report(
          `Steps stage "${stage}" extracts "${field.name}", but its output_schema has no such property and allows no other.`,
          field.at,
        );
      }
      continue;
    }
    const property: unknown = properties[field.name];
    const allowed = property === false ? [] : isObject(property) ? typesOf(property['type']) : undefined;
    if (allowed && !allowed.includes('string')) {
      report(
        `Steps stage "${stage}" extracts "${field.name}" as text, but its output_schema wants ${allowed.length ? allowed.join(' or ') : 'nothing'} there.`,
        field.at,
      );
    }
  }
  const required = Array.isArray(schema['required']) ? schema['required'] : [];
  required.forEach((name: unknown, index) => {
    if (typeof name !== 'string' || fields.some((f) => f.name === name)) return;
    report(
      `output_schema of steps stage "${stage}" requires "${name}", but no extract step writes it, so the stage always fails.`,
      reader.positionOf(schemaField, ['required', String(index)]),
    );
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typesOf(type: unknown): string[] | undefined {
  if (typeof type === 'string') return [type];
  if (Array.isArray(type) && type.every((t) => typeof t === 'string')) return type as string[];
  return undefined;
}
