import { isMap, isScalar, isSeq } from 'yaml';
import type { JsonSchema, StageDefinition, StageKind } from '../pipeline.model';
import type { JsonSchemaCheck } from '../checks/json-schema.check';
import { PIPELINE_FORMAT, STAGE_KEYS, VERIFY_VALUES } from '../pipeline-format';
import { readBrowserBlock, type BrowserDraft } from './browser-block.reader';
import type { Position } from './diagnostic.sink';
import { checkStepsOutputSchema } from '../checks/steps-output.check';
import { impliedStepsOutputSchema, readSteps } from './steps.reader';
import type { Field, YamlNodeReader } from './yaml-node.reader';

/** A stage as read: the definition when it is complete, and where its parts are. */
export interface StageDraft {
  /** The id when it is valid (graph checks use it even if other keys are wrong). */
  id?: string;
  definition?: StageDefinition;
  at: Position;
  idAt: Position;
  inputSchemaAt?: Position;
  outputSchema?: JsonSchema;
  /**
   * What a stage's output is known to be without an output_schema: a `steps`
   * stage returns exactly its extracted fields, as text.
   */
  impliedOutputSchema?: JsonSchema;
  inputSchema?: JsonSchema;
  browser?: BrowserDraft;
}

const STAGE_ID = new RegExp(PIPELINE_FORMAT.stageIdPattern);
const ENV_KEY = new RegExp(PIPELINE_FORMAT.envKeyPattern);
const RUN_ONLY = ['command', 'cwd', 'env'] as const;
/** The key that makes a stage each kind when `kind` is left out. */
const KIND_KEYS = [
  ['command', 'run'],
  ['message', 'gate'],
  ['steps', 'steps'],
] as const;

export function readStage(
  reader: YamlNodeReader,
  field: Field,
  schemas: JsonSchemaCheck,
): StageDraft {
  const draft: StageDraft = { at: field.at, idAt: field.at };
  const peeked = reader.peekString(field, 'id');
  const fields = reader.fields(
    field,
    STAGE_KEYS,
    peeked ? `stage "${peeked}"` : `stage ${field.path}`,
  );
  if (!fields) return draft;

  const idField = fields.get('id');
  const id = reader.string(idField, 'stage id');
  if (!idField) {
    reader.error(
      'missing_field',
      field,
      `Stage ${field.path} has no id.`,
      'Add id: <name>, unique in the pipeline, e.g. id: build.',
    );
  } else if (id !== undefined && !STAGE_ID.test(id)) {
    reader.error(
      'invalid_value',
      idField,
      `Stage id ${JSON.stringify(id)} is not valid.`,
      `Use a letter, then letters, digits, "_" or "-" (at most 64 characters): ${PIPELINE_FORMAT.stageIdPattern}.`,
    );
  } else if (id !== undefined) {
    draft.id = id;
  }
  if (idField) draft.idAt = idField.at;
  const name = draft.id ?? id ?? field.path;

  const kind = readKind(reader, field, fields, name);
  const description = reader.string(fields.get('description'), 'description');
  const timeoutSeconds =
    reader.integer(
      fields.get('timeout_seconds'),
      'timeout_seconds',
      PIPELINE_FORMAT.timeoutSeconds.min,
      PIPELINE_FORMAT.timeoutSeconds.max,
    ) ?? PIPELINE_FORMAT.timeoutSeconds.default;
  const retries =
    reader.integer(
      fields.get('retries'),
      'retries',
      PIPELINE_FORMAT.retries.min,
      PIPELINE_FORMAT.retries.max,
    ) ?? PIPELINE_FORMAT.retries.default;
  const inputSchemaField = fields.get('input_schema');
  draft.inputSchema = readSchema(
    reader,
    inputSchemaField,
    schemas,
    'input_schema',
    name,
  );
  draft.inputSchemaAt = inputSchemaField?.keyAt;
  draft.outputSchema = readSchema(
    reader,
    fields.get('output_schema'),
    schemas,
    'output_schema',
    name,
  );
  const browserField = fields.get('browser');
  draft.browser = browserField
    ? readBrowserBlock(reader, browserField, name)
    : undefined;
  const verify = readVerify(
    reader,
    fields.get('verify'),
    kind,
    draft.browser,
    name,
  );

  const common = {
    ...(description !== undefined && { description }),
    ...(draft.inputSchema !== undefined && { inputSchema: draft.inputSchema }),
    ...(draft.outputSchema !== undefined && {
      outputSchema: draft.outputSchema,
    }),
    timeoutSeconds,
    retries,
    ...(draft.browser && { browser: draft.browser.block }),
    ...(verify && { verify }),
  };
  const stageId = draft.id ?? '';

  if (kind === 'gate') {
    for (const key of [...RUN_ONLY, 'steps'] as const) {
      const extra = fields.get(key);
      if (extra) {
        reader.error(
          'field_not_allowed',
          extra,
          `Stage "${name}" is a gate, so it cannot have "${key}": a gate waits for the operator and runs nothing.`,
          key === 'steps'
            ? 'Remove "steps", or make it a steps stage (kind: steps) and drop "message".'
            : `Remove "${key}", or make it a run stage (kind: run) and drop "message".`,
          extra.keyAt,
        );
      }
    }
    const messageField = fields.get('message');
    const message = reader.string(messageField, 'message', { nonEmpty: true });
    if (!messageField) {
      reader.error(
        'missing_field',
        field,
        `Gate stage "${name}" has no message.`,
        'Add message: "<what the operator is asked>".',
      );
    }
    if (message !== undefined)
      draft.definition = { id: stageId, kind: 'gate', message, ...common };
    return draft;
  }

  if (kind === 'steps') {
    for (const key of [...RUN_ONLY, 'message'] as const) {
      const extra = fields.get(key);
      if (!extra) continue;
      reader.error(
        'field_not_allowed',
        extra,
        `Stage "${name}" is a steps stage, so it cannot have "${key}": it runs its built-in browser steps, no command${key === 'message' ? ', and asks no operator' : ''}.`,
        key === 'message'
          ? 'Remove "message", or make it a gate (kind: gate) and drop "steps".'
          : `Remove "${key}", or make it a run stage (kind: run, with a command) and drop "steps".`,
        extra.keyAt,
      );
    }
    const browserField = fields.get('browser');
    if (!browserField) {
      reader.error(
        'missing_field',
        field,
        `Steps stage "${name}" has no browser block: its steps drive the stage's own browser tab.`,
        'Add browser: with at least a profile (a saved login, e.g. browser: {profile: work-site}), or browser: {} for a throw-away browser.',
      );
    }
    const stepsField = fields.get('steps');
    if (!stepsField) {
      reader.error(
        'missing_field',
        field,
        `Steps stage "${name}" has no steps.`,
        'Add steps: a list of actions, e.g. steps: [{goto: "https://example.com"}, {screenshot: home.png}].',
      );
      return draft;
    }
    const steps = readSteps(reader, stepsField, name, timeoutSeconds);
    if (draft.outputSchema === undefined) {
      draft.impliedOutputSchema = impliedStepsOutputSchema(steps.fields);
    } else {
      checkStepsOutputSchema(reader, fields.get('output_schema') as Field, draft.outputSchema, steps.fields, name);
    }
    if (steps.steps && draft.browser) {
      draft.definition = {
        id: stageId,
        kind: 'steps',
        steps: steps.steps,
        ...common,
        browser: draft.browser.block,
      };
    }
    return draft;
  }

  const stepsOnRun = fields.get('steps');
  if (kind === 'run' && stepsOnRun) {
    reader.error(
      'field_not_allowed',
      stepsOnRun,
      `Stage "${name}" is a run stage, so it cannot have "steps": it runs its command.`,
      'Remove "steps", or make it a steps stage (kind: steps) and drop "command".',
      stepsOnRun.keyAt,
    );
  }
  const messageField = fields.get('message');
  if (kind === 'run' && messageField) {
    reader.error(
      'field_not_allowed',
      messageField,
      `Stage "${name}" is a run stage, so it cannot have "message" (only gates ask the operator).`,
      'Remove "message", or make it a gate (kind: gate) and drop "command".',
      messageField.keyAt,
    );
  }
  const commandField = fields.get('command');
  const command = readCommand(reader, commandField);
  if (kind === 'run' && !commandField) {
    reader.error(
      'missing_field',
      field,
      `Run stage "${name}" has no command.`,
      'Add command: "<shell line>" or a list of arguments, e.g. command: [node, build.js].',
    );
  }
  const cwdField = fields.get('cwd');
  const cwd = reader.string(cwdField, 'cwd', { nonEmpty: true });
  if (cwdField && cwd?.includes('\u0000')) {
    reader.error(
      'invalid_value',
      cwdField,
      'cwd contains a NUL character.',
      'Use a plain directory path.',
    );
  }
  const env = readEnv(reader, fields.get('env'), draft.browser !== undefined);
  if (kind === 'run' && command !== undefined) {
    draft.definition = {
      id: stageId,
      kind: 'run',
      command,
      ...(cwd !== undefined && { cwd }),
      env,
      ...common,
    };
  }
  return draft;
}

function readKind(
  reader: YamlNodeReader,
  stage: Field,
  fields: Map<string, Field>,
  name: string,
): StageKind | undefined {
  const kindField = fields.get('kind');
  if (kindField) {
    const kind = reader.string(kindField, 'kind');
    if (kind === 'run' || kind === 'gate' || kind === 'steps') return kind;
    if (kind !== undefined) {
      reader.error(
        'invalid_value',
        kindField,
        `Stage "${name}" has kind ${JSON.stringify(kind)}.`,
        'Use kind: run (runs a command), kind: gate (asks the operator) or kind: steps (built-in browser steps).',
      );
    }
    return undefined;
  }
  const present = KIND_KEYS.filter(([key]) => fields.has(key));
  if (present.length > 1) {
    const keys = present.map(([key]) => key);
    reader.error(
      'ambiguous_kind',
      stage,
      `Stage "${name}" has ${keys.join(' and ')}, so it is unclear what kind of stage it is.`,
      'Keep command for a run stage, message for a gate or steps for a steps stage; or state kind: run / gate / steps.',
    );
    return undefined;
  }
  if (present.length === 1) return present[0][1];
  reader.error(
    'missing_field',
    stage,
    `Stage "${name}" has neither command, message nor steps.`,
    'Add command: … for a stage that runs something, message: … for a gate that asks the operator, or steps: […] for built-in browser steps.',
  );
  return undefined;
}

function readCommand(
  reader: YamlNodeReader,
  field: Field | undefined,
): string | string[] | undefined {
  if (!field) return undefined;
  if (isSeq(field.node)) {
    const items = reader.items(field, 'command') ?? [];
    if (items.length === 0) {
      reader.error(
        'invalid_value',
        field,
        'command is an empty list.',
        'Give the program and its arguments, e.g. command: [node, build.js].',
      );
      return undefined;
    }
    const argv: string[] = [];
    for (const item of items) {
      const arg = reader.string(item, `command argument ${item.key}`);
      if (arg !== undefined) argv.push(arg);
    }
    if (argv.length !== items.length) return undefined;
    if (argv[0].trim() === '') {
      reader.error(
        'invalid_value',
        items[0],
        'The program (first item of command) is empty.',
        'Put the program to run first, e.g. command: [node, build.js].',
      );
      return undefined;
    }
    return argv;
  }
  if (isScalar(field.node) && typeof field.node.value === 'string') {
    return reader.string(field, 'command', { nonEmpty: true });
  }
  reader.wrongType(
    field,
    'command must be a string (run by /bin/sh -c) or a list of strings (argv)',
    'a string or a list of strings',
    true,
  );
  return undefined;
}

function readEnv(
  reader: YamlNodeReader,
  field: Field | undefined,
  browserStage: boolean,
): Record<string, string> {
  const env: Record<string, string> = {};
  if (!field) return env;
  // Every key is collected here and judged below, so none counts as unknown.
  const entries: Field[] = [];
  const map = reader.fields(field, [], 'env', (entry) => {
    entries.push(entry);
    return true;
  });
  if (!map) return env;
  for (const entry of entries) {
    if (!ENV_KEY.test(entry.key)) {
      reader.error(
        'invalid_value',
        entry,
        `env key ${JSON.stringify(entry.key)} is not a variable name.`,
        `Use letters, digits and "_", not starting with a digit: ${PIPELINE_FORMAT.envKeyPattern}.`,
        entry.keyAt,
      );
      continue;
    }
    const reserved = reservedPrefix(entry.key, browserStage);
    if (reserved) {
      reader.error(
        'reserved_env_key',
        entry,
        `env key "${entry.key}" is reserved: the Host sets ${reserved}* variables itself.`,
        `Rename the variable so it does not start with ${reserved}.`,
        entry.keyAt,
      );
      continue;
    }
    const value = reader.string(entry, `env ${entry.key}`);
    // defineProperty: a variable named __proto__ must stay an ordinary key.
    if (value !== undefined) {
      Object.defineProperty(env, entry.key, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return env;
}

function reservedPrefix(
  key: string,
  browserStage: boolean,
): string | undefined {
  if (key.startsWith(PIPELINE_FORMAT.reservedEnvPrefix))
    return PIPELINE_FORMAT.reservedEnvPrefix;
  if (browserStage && key.startsWith(PIPELINE_FORMAT.browserEnvPrefix))
    return PIPELINE_FORMAT.browserEnvPrefix;
  return undefined;
}

function readSchema(
  reader: YamlNodeReader,
  field: Field | undefined,
  schemas: JsonSchemaCheck,
  key: 'input_schema' | 'output_schema',
  stage: string,
): JsonSchema | undefined {
  if (!field) return undefined;
  const node = field.node;
  if (!isMap(node) && !(isScalar(node) && typeof node.value === 'boolean')) {
    reader.wrongType(
      field,
      `${key} must be a JSON Schema (a mapping, or true / false)`,
      'a mapping',
    );
    return undefined;
  }
  const copied = reader.plain(field);
  const problem =
    'problem' in copied
      ? { message: copied.problem }
      : schemas.problem(copied.value);
  if (problem !== undefined || !('value' in copied)) {
    const at = problem?.pointer
      ? reader.positionOf(field, problem.pointer)
      : problem?.keyword !== undefined
        ? (reader.keyPosition(field, problem.keyword) ?? field.at)
        : field.at;
    reader.error(
      'invalid_schema',
      field,
      `${key} of stage "${stage}" is not a valid JSON Schema: ${problem?.message ?? 'unreadable'}.`,
      'Write a JSON Schema draft-07 (e.g. type: object, properties: …, required: […]); check keyword spelling and that every $ref points inside the schema.',
      at,
    );
    return undefined;
  }
  return copied.value as JsonSchema;
}

function readVerify(
  reader: YamlNodeReader,
  field: Field | undefined,
  kind: StageKind | undefined,
  browser: BrowserDraft | undefined,
  stage: string,
): 'browser_login' | undefined {
  if (!field) return undefined;
  const value = reader.string(field, 'verify');
  if (value === undefined) return undefined;
  if (!(VERIFY_VALUES as readonly string[]).includes(value)) {
    reader.error(
      'invalid_value',
      field,
      `verify ${JSON.stringify(value)} is not known.`,
      'The only value is verify: browser_login.',
    );
    return undefined;
  }
  const missing: string[] = [];
  if (kind !== 'gate')
    missing.push('kind: gate (the operator logs in, then accepts)');
  if (!browser?.hasProfile) missing.push('browser.profile (the login to save)');
  if (!browser?.hasCheck)
    missing.push('browser.check (how the Host re-checks the login)');
  if (missing.length > 0) {
    reader.error(
      'invalid_verify',
      field,
      `verify: browser_login on stage "${stage}" needs ${missing.join(' and ')}.`,
      'Use verify: browser_login only on the human login gate: kind: gate with browser.profile and browser.check (the same check as the check stage).',
    );
    return undefined;
  }
  return 'browser_login';
}
