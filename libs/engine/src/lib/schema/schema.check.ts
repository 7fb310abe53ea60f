import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { JsonSchema } from '@stageflow/pipeline';

/**
 * Validates stage inputs and outputs against their JSON Schemas (ajv,
 * allErrors). Pure and synchronous; compiled schemas are cached by their text,
 * since a run's snapshot never changes.
 */
export class SchemaCheck {
  // addUsedSchema: false keeps `$id`s out of the shared registry, so two stages
  // may reuse one `$id` with different schemas. The loader already refused
  // broken schemas, so strict mode is the loader's job, not ours.
  private readonly ajv = new Ajv({ allErrors: true, strict: false, addUsedSchema: false, logger: false });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor() {
    addFormats(this.ajv);
  }

  /**
   * Every way `value` misses `schema`, each naming the field by its JSON
   * pointer (ajv `instancePath`, `/` for the whole value). Empty when it fits.
   */
  problems(schema: JsonSchema, value: unknown): string[] {
    const validate = this.compile(schema);
    if (validate(value)) return [];
    return (validate.errors ?? []).map(describe);
  }

  private compile(schema: JsonSchema): ValidateFunction {
    const text = JSON.stringify(schema);
    let validate = this.compiled.get(text);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.compiled.set(text, validate);
    }
    return validate;
  }
}

function describe(error: ErrorObject): string {
  const path = error.instancePath || '/';
  const missing = (error.params as { missingProperty?: string }).missingProperty;
  if (error.keyword === 'required' && missing) {
    return `${path === '/' ? '' : path}/${missing} is required`;
  }
  if (error.keyword === 'additionalProperties') {
    const extra = (error.params as { additionalProperty?: string }).additionalProperty;
    return `${path === '/' ? '' : path}/${extra} is not allowed`;
  }
  return `${path} ${error.message ?? 'is invalid'}`;
}

/** One line for an event or a stage's reason: `output does not match output_schema: /count must be integer`. */
export function schemaMismatch(what: 'input' | 'output', problems: readonly string[]): string {
  return `${what} does not match ${what}_schema: ${problems.join('; ')}`;
}
