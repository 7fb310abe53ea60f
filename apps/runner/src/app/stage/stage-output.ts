import type { SchemaCheck } from '@stageflow/engine';
import { schemaMismatch } from '@stageflow/engine';
import type { JsonSchema } from '@stageflow/pipeline';

/** Largest output file read; a bigger one fails the stage (outputs travel in Redis and events). */
export const MAX_OUTPUT_BYTES = 1024 * 1024;

export type OutputVerdict = { ok: true; output: unknown } | { ok: false; error: string };

/**
 * Judges what a stage wrote to `STAGEFLOW_OUTPUT`: no file means `{}`, the
 * file must hold one JSON value, and that value must fit the stage's
 * `output_schema` (the error names the field).
 */
export function judgeOutput(
  text: string | undefined,
  schema: JsonSchema | undefined,
  schemas: SchemaCheck,
  /** Fields the Host adds over the stage's own output (a login check's `logged_in` and `url`). */
  hostFields?: Record<string, unknown>,
): OutputVerdict {
  let output: unknown = {};
  if (text !== undefined) {
    if (Buffer.byteLength(text) > MAX_OUTPUT_BYTES) {
      return { ok: false, error: `output file is larger than ${MAX_OUTPUT_BYTES} bytes` };
    }
    try {
      output = JSON.parse(text);
    } catch (error) {
      return { ok: false, error: `output file is not valid JSON: ${(error as Error).message}` };
    }
  }
  if (hostFields) {
    const added = addHostFields(output, hostFields);
    if (!added.ok) return added;
    output = added.output;
  }
  return judgeValue(output, schema, schemas);
}

/** The Host's fields (a login check's `logged_in` and `url`) over a stage's own output, which must then be an object. */
export function addHostFields(output: unknown, hostFields: Record<string, unknown>): OutputVerdict {
  if (typeof output !== 'object' || output === null || Array.isArray(output)) {
    return { ok: false, error: `output must be a JSON object, because the Host adds ${Object.keys(hostFields).join(', ')} to it` };
  }
  return { ok: true, output: { ...output, ...hostFields } };
}

/** Judges a stage's output value against its `output_schema` (the error names the field). */
export function judgeValue(output: unknown, schema: JsonSchema | undefined, schemas: SchemaCheck): OutputVerdict {
  if (schema !== undefined) {
    const problems = schemas.problems(schema, output);
    if (problems.length) return { ok: false, error: schemaMismatch('output', problems) };
  }
  return { ok: true, output };
}
