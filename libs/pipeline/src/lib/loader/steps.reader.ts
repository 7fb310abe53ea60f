import { isMap, isScalar } from 'yaml';
import { artifactNameProblem } from '@stageflow/contracts';
import type { JsonSchema, StepAction } from '../pipeline.model';
import {
  PIPELINE_FORMAT,
  PRESS_KEYS,
  STEP_ACTION_KEYS,
  STEP_ACTIONS,
  WAIT_FOR_CONDITIONS,
  type StepActionName,
} from '../pipeline-format';
import { checkUrl } from './browser-block.reader';
import type { Position } from './diagnostic.sink';
import type { Field, YamlNodeReader } from './yaml-node.reader';

/** The `steps:` list as read, with what later checks need. */
export interface StepsDraft {
  /** Every step, when each one was read without a problem. */
  steps?: StepAction[];
  /** Output fields the `extract` steps write, in order, with where each is named. */
  fields: Array<{ name: string; at: Position }>;
}

const OUTPUT_FIELD = new RegExp(PIPELINE_FORMAT.outputFieldPattern);
const SCREENSHOT_NAME = new RegExp(PIPELINE_FORMAT.screenshotNamePattern);
const ATTRIBUTE = new RegExp(PIPELINE_FORMAT.attributePattern);

const EXAMPLES: Readonly<Record<StepActionName, string>> = {
  goto: '- goto: https://example.com/login',
  click: '- click: "#sign-in"',
  fill: '- fill: {selector: "#user", value: demo}',
  press: '- press: Enter',
  wait_for: '- wait_for: {url: "*/account*"}',
  extract: '- extract: {field: name, selector: "#account-name"}',
  screenshot: '- screenshot: account.png',
};

/** True when `key` is a key name `press` knows or one printable character. */
export function isPressKey(key: string): boolean {
  if ((PRESS_KEYS as readonly string[]).includes(key)) return true;
  const chars = [...key];
  if (chars.length !== 1) return false;
  const code = chars[0].codePointAt(0) ?? 0;
  return code >= 0x20 && code !== 0x7f && !(code >= 0x80 && code < 0xa0);
}

/**
 * Reads a `steps:` list: each item a mapping with exactly one action, in its
 * short form (`- click: "#x"`) or its mapping form (`- click: {selector:
 * "#x", timeout_seconds: 5}`). Every problem is reported with its position;
 * `steps` is set only when the whole list is usable.
 */
export function readSteps(
  reader: YamlNodeReader,
  field: Field,
  stage: string,
  stageTimeoutSeconds: number,
): StepsDraft {
  const draft: StepsDraft = { fields: [] };
  const items = reader.items(field, `steps of stage "${stage}"`);
  if (!items) return draft;
  if (items.length === 0) {
    reader.error(
      'no_steps',
      field,
      `Stage "${stage}" has an empty steps list, so it would do nothing.`,
      `Add at least one action, e.g. ${EXAMPLES.goto}.`,
    );
    return draft;
  }
  const steps: StepAction[] = [];
  const screenshots = new Map<string, number>();
  const fields = new Map<string, number>();
  let complete = true;
  items.forEach((item, index) => {
    const step = readStep(reader, item, index + 1, stage, stageTimeoutSeconds);
    if (!step) {
      complete = false;
      return;
    }
    const n = index + 1;
    if (step.action === 'extract') {
      const first = fields.get(step.field);
      if (first !== undefined) {
        complete = false;
        reader.error(
          'duplicate_output_field',
          item,
          `Steps ${first} and ${n} of stage "${stage}" both extract output field "${step.field}"; the second would overwrite the first.`,
          'Give each extract its own field name.',
          reader.positionOf(item, ['extract', 'field']),
        );
        return;
      }
      fields.set(step.field, n);
      draft.fields.push({ name: step.field, at: reader.positionOf(item, ['extract', 'field']) });
    }
    if (step.action === 'screenshot') {
      const first = screenshots.get(step.name);
      if (first !== undefined) {
        complete = false;
        reader.error(
          'duplicate_artifact_name',
          item,
          `Steps ${first} and ${n} of stage "${stage}" both save screenshot "${step.name}"; the second would replace the first.`,
          'Give each screenshot its own name, e.g. before-login.png and after-login.png.',
          reader.positionOf(item, ['screenshot', 'name']),
        );
        return;
      }
      screenshots.set(step.name, n);
    }
    steps.push(step);
  });
  if (complete) draft.steps = steps;
  return draft;
}

function readStep(
  reader: YamlNodeReader,
  item: Field,
  n: number,
  stage: string,
  stageTimeoutSeconds: number,
): StepAction | undefined {
  const what = `step ${n} of stage "${stage}"`;
  if (!isMap(item.node)) {
    reader.wrongType(
      item,
      `${what} must be a mapping with one action (${STEP_ACTIONS.join(', ')})`,
      `one action, e.g. ${EXAMPLES.click}`,
    );
    return undefined;
  }
  const entries = reader.fields(item, STEP_ACTIONS, what, (entry) => {
    if (entry.key !== 'timeout_seconds') return false;
    reader.error(
      'invalid_step',
      entry,
      `timeout_seconds in ${what} sits beside the action; it belongs inside it.`,
      'Write the action as a mapping with the timeout inside, e.g. - click: {selector: "#sign-in", timeout_seconds: 20}.',
      entry.keyAt,
    );
    return true;
  });
  if (!entries) return undefined;
  const actions = [...entries.values()];
  if (actions.length === 0) {
    // Unknown keys were reported one by one; an empty mapping is reported here.
    if (item.node.items.length === 0) {
      reader.error(
        'invalid_step',
        item,
        `${capitalise(what)} is empty.`,
        `Give it one action: ${STEP_ACTIONS.join(', ')}; e.g. ${EXAMPLES.click}.`,
      );
    }
    return undefined;
  }
  if (actions.length > 1) {
    reader.error(
      'invalid_step',
      actions[1],
      `${capitalise(what)} has ${actions.length} actions (${actions.map((a) => a.key).join(', ')}); a step does one thing.`,
      'Put each action in its own list item, starting with "- ".',
      actions[1].keyAt,
    );
    return undefined;
  }
  const action = actions[0];
  return readAction(reader, action, action.key as StepActionName, what, stageTimeoutSeconds);
}

function readAction(
  reader: YamlNodeReader,
  field: Field,
  action: StepActionName,
  what: string,
  stageTimeoutSeconds: number,
): StepAction | undefined {
  const spec = STEP_ACTION_KEYS[action];
  // "step 3 (click) of stage "x"": the step's number and action, as the runner names it too.
  const label = what.replace(/^(step \d+)/, `$1 (${action})`);
  let keys: Map<string, Field> | undefined;
  if (spec.short !== undefined && !isMap(field.node)) {
    if (!isScalar(field.node) || field.node.value === null) {
      reader.wrongType(
        field,
        `${label} must be a ${spec.short} or a mapping {${spec.keys.join(', ')}}`,
        `a ${spec.short}, e.g. ${EXAMPLES[action]}`,
      );
      return undefined;
    }
    keys = new Map([[spec.short, field]]);
  } else if (isMap(field.node)) {
    keys = reader.fields(field, spec.keys, label);
  } else {
    reader.wrongType(field, `${label} must be a mapping {${spec.keys.join(', ')}}`, `a mapping, e.g. ${EXAMPLES[action]}`);
    return undefined;
  }
  if (!keys) return undefined;

  // Set by the helpers below too, so one object rather than a narrowed local.
  const state = { ok: true };
  for (const key of spec.required) {
    if (keys.has(key)) continue;
    state.ok = false;
    reader.error(
      'missing_field',
      field,
      `${capitalise(label)} has no ${key}.`,
      `Add ${key}: …, e.g. ${EXAMPLES[action]}.`,
      field.keyAt,
    );
  }
  const timeoutSeconds = readTimeout(reader, keys.get('timeout_seconds'), label, stageTimeoutSeconds);
  if (keys.has('timeout_seconds') && timeoutSeconds === undefined) state.ok = false;
  const withTimeout = timeoutSeconds === undefined ? {} : { timeoutSeconds };
  const text = (key: string, nonEmpty = true): string | undefined => {
    const value = reader.string(keys?.get(key), `${key} of ${label}`, { nonEmpty });
    if (keys?.has(key) && value === undefined) state.ok = false;
    return value;
  };

  switch (action) {
    case 'goto': {
      const url = text('url');
      const urlField = keys.get('url');
      if (url === undefined || !urlField || !checkUrl(reader, urlField, `${capitalise(label)}: url`, url)) return undefined;
      return state.ok ? { action, url, ...withTimeout } : undefined;
    }
    case 'click': {
      const selector = text('selector');
      return state.ok && selector !== undefined ? { action, selector, ...withTimeout } : undefined;
    }
    case 'fill': {
      const selector = text('selector');
      // An empty value clears the field.
      const value = text('value', false);
      return state.ok && selector !== undefined && value !== undefined ? { action, selector, value, ...withTimeout } : undefined;
    }
    case 'press': {
      const key = reader.string(keys.get('key'), `key of ${label}`);
      const keyField = keys.get('key');
      if (keyField && key !== undefined && !isPressKey(key)) {
        reader.error(
          'invalid_value',
          keyField,
          `${capitalise(label)} presses ${JSON.stringify(key)}, which is not a key press knows.`,
          `Use one character, or one of ${PRESS_KEYS.join(', ')}. Key chords (Control+A) are not supported.`,
        );
        return undefined;
      }
      const selector = text('selector');
      if (!state.ok || key === undefined) return undefined;
      return { action, key, ...(selector !== undefined && { selector }), ...withTimeout };
    }
    case 'wait_for': {
      const present = WAIT_FOR_CONDITIONS.filter((k) => keys?.has(k));
      if (present.length === 0) {
        reader.error(
          'missing_field',
          field,
          `${capitalise(label)} says nothing to wait for.`,
          `Give exactly one of selector (an element is visible), url (the address matches) or text (the page shows it), e.g. ${EXAMPLES.wait_for}.`,
          field.keyAt,
        );
        return undefined;
      }
      if (present.length > 1) {
        const second = keys.get(present[1]) as Field;
        reader.error(
          'invalid_step',
          second,
          `${capitalise(label)} waits for ${present.join(' and ')}; it waits for one thing.`,
          'Keep one of selector, url and text here, and add another wait_for step for the next condition.',
          second.keyAt,
        );
        return undefined;
      }
      const condition = present[0];
      const value = text(condition);
      return state.ok && value !== undefined ? { action, condition, value, ...withTimeout } : undefined;
    }
    case 'extract': {
      const fieldField = keys.get('field');
      const name = reader.string(fieldField, `field of ${label}`);
      if (fieldField && name !== undefined && !OUTPUT_FIELD.test(name)) {
        reader.error(
          'invalid_value',
          fieldField,
          `${capitalise(label)}: output field ${JSON.stringify(name)} is not a field name.`,
          `Use a letter or "_", then letters, digits or "_" (at most 64 characters): ${PIPELINE_FORMAT.outputFieldPattern}. Conditions read it as output.<field>.`,
        );
        state.ok = false;
      }
      const selector = text('selector');
      const attributeField = keys.get('attribute');
      const attribute = text('attribute');
      if (attributeField && attribute !== undefined && !ATTRIBUTE.test(attribute)) {
        reader.error(
          'invalid_value',
          attributeField,
          `${capitalise(label)}: attribute ${JSON.stringify(attribute)} is not an attribute name.`,
          'Give the name of one HTML attribute, e.g. attribute: href; leave attribute out to read the text.',
        );
        state.ok = false;
      }
      if (!state.ok || name === undefined || selector === undefined) return undefined;
      return { action, field: name, selector, ...(attribute !== undefined && { attribute }), ...withTimeout };
    }
    case 'screenshot': {
      const nameField = keys.get('name');
      const name = text('name');
      if (nameField && name !== undefined) {
        const problem = screenshotNameProblem(name);
        if (problem) {
          reader.error(
            'invalid_artifact_name',
            nameField,
            `${capitalise(label)}: screenshot name ${JSON.stringify(name)} is not usable: ${problem}.`,
            'Use one file name ending in .png, of letters, digits, ".", "_" and "-", e.g. account.png. It is never a path: the Host keeps artifacts per run, stage and attempt.',
          );
          return undefined;
        }
      }
      const fullPage = reader.boolean(keys.get('full_page'), `full_page of ${label}`);
      if (keys.has('full_page') && fullPage === undefined) state.ok = false;
      if (!state.ok || name === undefined) return undefined;
      return { action, name, fullPage: fullPage ?? false, ...withTimeout };
    }
  }
}

function readTimeout(
  reader: YamlNodeReader,
  field: Field | undefined,
  label: string,
  stageTimeoutSeconds: number,
): number | undefined {
  const value = reader.integer(
    field,
    `timeout_seconds of ${label}`,
    PIPELINE_FORMAT.timeoutSeconds.min,
    PIPELINE_FORMAT.timeoutSeconds.max,
  );
  if (field && value !== undefined && value > stageTimeoutSeconds) {
    reader.error(
      'invalid_value',
      field,
      `timeout_seconds of ${label} is ${value}, longer than the stage's timeout_seconds (${stageTimeoutSeconds}): the stage would be stopped first.`,
      `Use at most ${stageTimeoutSeconds}, or raise the stage's timeout_seconds.`,
    );
    return undefined;
  }
  return value;
}

/** Why `name` cannot be a screenshot's artifact name, or undefined. */
export function screenshotNameProblem(name: string): string | undefined {
  const problem = artifactNameProblem(name);
  if (problem) return problem;
  if (!SCREENSHOT_NAME.test(name)) return 'a screenshot is a PNG, so its name ends in ".png"';
  return undefined;
}

/**
 * The output of a `steps` stage is exactly its extracted fields, all text:
 * the schema graph checks use when the stage declares no output_schema.
 */
export function impliedStepsOutputSchema(fields: readonly { name: string }[]): JsonSchema {
  return {
    type: 'object',
    properties: Object.fromEntries(fields.map((f) => [f.name, { type: 'string' }])),
    required: fields.map((f) => f.name),
    additionalProperties: false,
  };
}

const capitalise = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
