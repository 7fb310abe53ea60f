import {
  BROWSER_HOST_OPTIONS,
  PIPELINE_FORMAT,
  PRESS_KEYS,
} from './pipeline-format';

const F = PIPELINE_FORMAT;

const schemaValue = {
  description: 'A JSON Schema (draft-07), or true / false.',
  anyOf: [
    { $ref: 'http://json-schema.org/draft-07/schema#' },
    { type: 'boolean' },
  ],
};

const browserCheck = {
  type: 'object',
  description:
    'How the Host judges "logged in". Needs url and at least one criterion.',
  additionalProperties: false,
  required: ['url'],
  anyOf: [
    { required: ['logged_out_url'] },
    { required: ['selector'] },
    { required: ['cookie'] },
  ],
  properties: {
    url: {
      type: 'string',
      pattern: '^https?://',
      description:
        'The page the Host opens to check the login (http or https).',
    },
    logged_out_url: {
      type: 'string',
      minLength: 1,
      description:
        'Logged out if the final URL matches this (substring, or glob with *).',
    },
    selector: {
      type: 'string',
      minLength: 1,
      description: 'Logged in if this CSS selector is on the page.',
    },
    cookie: {
      type: 'string',
      pattern: "^[!#$%&'*+\\-.^_`|~0-9A-Za-z]+$",
      description:
        'Logged in if a cookie with this name is set for the check URL.',
    },
  },
};

const browser = {
  type: 'object',
  description:
    'A browser for the stage. Launch options (launch_args, executable_path, display, …) are Host settings in $STAGEFLOW_HOME/config.yaml and fail the load here.',
  additionalProperties: false,
  properties: {
    profile: {
      type: 'string',
      pattern: F.profilePattern,
      not: { pattern: '\\.\\.' },
      description:
        'A saved-login name (never a path). Absent: a throw-away browser.',
    },
    headed: {
      type: 'boolean',
      default: true,
      description: 'Show a window. Use one value for all stages of a profile.',
    },
    allow_domains: {
      type: 'array',
      items: { type: 'string', pattern: F.domainPattern },
      default: [],
      description:
        'Hostnames the stage may visit (*.example.com for subdomains). Enforced only without a profile.',
    },
    login_url: {
      type: 'string',
      pattern: '^https?://',
      description: 'Where a human login gate opens the browser.',
    },
    check: browserCheck,
  },
};

const stepTimeout = {
  type: 'integer',
  minimum: F.timeoutSeconds.min,
  maximum: F.timeoutSeconds.max,
  description:
    "Most seconds this step may take; at most the stage's timeout_seconds.",
};
const selector = { type: 'string', minLength: 1, description: 'A CSS selector.' };
const httpUrl = { type: 'string', pattern: '^https?://' };

/** One action per step: its short form (a string) or its mapping form. */
const oneAction = (
  name: string,
  description: string,
  value: Record<string, unknown>,
) => ({
  type: 'object',
  description,
  additionalProperties: false,
  required: [name],
  properties: { [name]: value },
});
const mapping = (
  properties: Record<string, unknown>,
  required: string[],
  extra: Record<string, unknown> = {},
) => ({
  type: 'object',
  additionalProperties: false,
  required,
  properties: { ...properties, timeout_seconds: stepTimeout },
  ...extra,
});

const step = {
  description:
    'One action on the stage\'s tab: goto, click, fill, press, wait_for, extract or screenshot.',
  oneOf: [
    oneAction('goto', 'Open a URL and wait for it to load.', {
      oneOf: [httpUrl, mapping({ url: httpUrl }, ['url'])],
    }),
    oneAction('click', 'Click the first visible element matching a selector.', {
      oneOf: [selector, mapping({ selector }, ['selector'])],
    }),
    oneAction(
      'fill',
      'Replace the text of an input, textarea or contenteditable element.',
      mapping({ selector, value: { type: 'string' } }, ['selector', 'value']),
    ),
    oneAction(
      'press',
      `Press one key: one character or ${PRESS_KEYS.join(', ')}.`,
      {
        oneOf: [
          { type: 'string', minLength: 1 },
          mapping({ key: { type: 'string', minLength: 1 }, selector }, ['key']),
        ],
      },
    ),
    oneAction(
      'wait_for',
      'Wait until an element is visible (selector), the URL matches (url: substring, or glob with *), or the page shows a text.',
      mapping(
        {
          selector,
          url: { type: 'string', minLength: 1 },
          text: { type: 'string', minLength: 1 },
        },
        [],
        {
          oneOf: [
            { required: ['selector'] },
            { required: ['url'] },
            { required: ['text'] },
          ],
        },
      ),
    ),
    oneAction(
      'extract',
      "Read an element's text, or one attribute, into an output field.",
      mapping(
        {
          field: { type: 'string', pattern: F.outputFieldPattern },
          selector,
          attribute: { type: 'string', pattern: F.attributePattern },
        },
        ['field', 'selector'],
      ),
    ),
    oneAction('screenshot', 'Save a PNG of the tab as an artifact.', {
      oneOf: [
        { type: 'string', pattern: F.screenshotNamePattern },
        mapping(
          {
            name: { type: 'string', pattern: F.screenshotNamePattern },
            full_page: { type: 'boolean', default: false },
          },
          ['name'],
        ),
      ],
    }),
  ],
};

const gateOnlyForbids = {
  anyOf: [
    { required: ['command'] },
    { required: ['cwd'] },
    { required: ['env'] },
    { required: ['steps'] },
  ],
};

const stepsForbids = {
  anyOf: [
    { required: ['command'] },
    { required: ['cwd'] },
    { required: ['env'] },
    { required: ['message'] },
  ],
};

const stage = {
  type: 'object',
  additionalProperties: false,
  required: ['id'],
  properties: {
    id: {
      type: 'string',
      pattern: F.stageIdPattern,
      description: 'Unique stage id; edges refer to it.',
    },
    kind: {
      enum: ['run', 'gate', 'steps'],
      description:
        'run: runs command. gate: asks the operator. steps: built-in browser steps. Default: run with command, gate with message, steps with steps.',
    },
    description: { type: 'string' },
    command: {
      description:
        'A string runs through /bin/sh -c; a list is argv, run directly.',
      oneOf: [
        { type: 'string', minLength: 1 },
        { type: 'array', minItems: 1, items: { type: 'string' } },
      ],
    },
    cwd: {
      type: 'string',
      minLength: 1,
      description:
        'Working directory, relative to the run work dir or absolute.',
    },
    env: {
      type: 'object',
      description: `Extra environment variables (string values). ${F.reservedEnvPrefix}* is reserved.`,
      propertyNames: {
        pattern: F.envKeyPattern,
        not: { pattern: `^${F.reservedEnvPrefix}` },
      },
      additionalProperties: { type: 'string' },
    },
    timeout_seconds: {
      type: 'integer',
      minimum: F.timeoutSeconds.min,
      maximum: F.timeoutSeconds.max,
      default: F.timeoutSeconds.default,
    },
    retries: {
      type: 'integer',
      minimum: F.retries.min,
      maximum: F.retries.max,
      default: F.retries.default,
    },
    input_schema: schemaValue,
    output_schema: schemaValue,
    browser,
    verify: {
      enum: ['browser_login'],
      description:
        'On a human login gate: after Accept, the Host re-checks the login. Needs browser.profile and browser.check.',
    },
    message: {
      type: 'string',
      minLength: 1,
      description: 'What a gate asks the operator.',
    },
    steps: {
      type: 'array',
      minItems: 1,
      items: step,
      description:
        'The actions of a steps stage, run in order on its own browser tab.',
    },
  },
  allOf: [
    {
      if: { required: ['kind'], properties: { kind: { const: 'gate' } } },
      then: { required: ['message'], not: gateOnlyForbids },
    },
    {
      if: { required: ['kind'], properties: { kind: { const: 'run' } } },
      then: {
        required: ['command'],
        not: { anyOf: [{ required: ['message'] }, { required: ['steps'] }] },
      },
    },
    {
      if: { required: ['kind'], properties: { kind: { const: 'steps' } } },
      then: { required: ['steps', 'browser'], not: stepsForbids },
    },
    {
      if: { not: { required: ['kind'] } },
      then: {
        oneOf: [
          {
            required: ['command'],
            not: { anyOf: [{ required: ['message'] }, { required: ['steps'] }] },
          },
          { required: ['message'], not: gateOnlyForbids },
          { required: ['steps', 'browser'], not: stepsForbids },
        ],
      },
    },
    {
      if: { required: ['verify'] },
      then: {
        required: ['kind', 'browser'],
        properties: {
          kind: { const: 'gate' },
          browser: { required: ['profile', 'check'] },
        },
      },
    },
  ],
};

/**
 * JSON Schema (draft-07) of pipeline format v1, for editors (e.g. the YAML
 * language server). It mirrors the loader's shape rules; graph rules (ids,
 * cycles, joins) and condition syntax are only checked by `loadPipeline`.
 * `docs/pipeline.schema.json` holds the same content (a test keeps them equal).
 */
export const PIPELINE_JSON_SCHEMA: Readonly<Record<string, unknown>> = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'Stageflow pipeline (format v1)',
  description:
    'See docs/yaml-catalog.md for every key, default and error code.',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'stages'],
  properties: {
    version: { const: 1, description: 'Format version; only 1.' },
    name: {
      type: 'string',
      pattern: F.namePattern,
      description: 'Pipeline name.',
    },
    description: { type: 'string' },
    max_active_stages: {
      type: 'integer',
      minimum: F.maxActiveStages.min,
      maximum: F.maxActiveStages.max,
      default: F.maxActiveStages.default,
      description:
        'At most this many stages of one run are queued or running at once.',
    },
    stages: { type: 'array', minItems: 1, items: stage },
    edges: {
      description:
        'Stage order: `to` starts after `from` (and its other parents) ended.',
      type: ['array', 'null'],
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['from', 'to'],
        properties: {
          from: { type: 'string', pattern: F.stageIdPattern },
          to: { type: 'string', pattern: F.stageIdPattern },
          if: {
            type: 'string',
            minLength: 1,
            description:
              'Condition on the from stage\'s output, e.g. "not output.logged_in".',
          },
        },
      },
    },
  },
  definitions: {
    hostOnlyBrowserKeys: {
      description: `Keys that are Host settings, never stage YAML: ${Object.keys(BROWSER_HOST_OPTIONS).join(', ')}.`,
    },
  },
};
