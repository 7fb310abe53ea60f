import type { Pipeline } from './pipeline.model';

/**
 * Stable codes of load problems. Each is documented with its fix in
 * `docs/yaml-catalog.md` (a test keeps the two in step); clients may switch on them.
 */
export const PIPELINE_DIAGNOSTIC_CODES = [
  // Source and YAML
  'input_too_large',
  'yaml_syntax',
  'yaml_warning',
  'duplicate_key',
  'yaml_alias_limit',
  'empty_document',
  // Shape of keys and values
  'unknown_key',
  'missing_field',
  'wrong_type',
  'invalid_value',
  'unsupported_version',
  'field_not_allowed',
  'ambiguous_kind',
  'reserved_env_key',
  'invalid_schema',
  'no_stages',
  // Browser block
  'browser_host_option',
  'profile_not_a_name',
  'invalid_domain',
  'invalid_url',
  'check_needs_profile',
  'invalid_verify',
  'profile_headed_mismatch',
  // Steps stages
  'no_steps',
  'invalid_step',
  'invalid_artifact_name',
  'duplicate_output_field',
  'duplicate_artifact_name',
  'steps_output_mismatch',
  // Conditions
  'invalid_condition',
  'condition_unknown_field',
  // Graph
  'duplicate_stage_id',
  'duplicate_edge',
  'unknown_stage_reference',
  'cycle',
  'unreachable_stage',
  'join_skips_work',
  'join_input_mismatch',
  'input_mismatch',
  // Safety net: a bug in the loader, reported instead of thrown
  'internal_error',
] as const;

export type PipelineDiagnosticCode = (typeof PIPELINE_DIAGNOSTIC_CODES)[number];

/** One problem found while loading a pipeline, with where it is and what to do. */
export interface PipelineDiagnostic {
  /** Stable snake_case code, e.g. `unknown_key`. */
  code: PipelineDiagnosticCode;
  severity: 'error' | 'warning';
  /** What is wrong, naming the stage, key or value. */
  message: string;
  /** What to do about it. */
  hint: string;
  /** The `file` option of the load, or `<inline>`. */
  file: string;
  /** 1-based line of the offending node. */
  line: number;
  /** 1-based column of the offending node. */
  column: number;
  /** Where in the document, e.g. `stages[2].browser.profile`. */
  path?: string;
}

export type PipelineLoadResult =
  | { ok: true; pipeline: Pipeline; warnings: PipelineDiagnostic[] }
  | { ok: false; errors: PipelineDiagnostic[]; warnings: PipelineDiagnostic[] };

export interface LoadPipelineOptions {
  /** Shown in every diagnostic. @defaultValue `'<inline>'` */
  file?: string;
  /** Report every warning as an error (for CI). @defaultValue false */
  strict?: boolean;
}
