import { BROWSER_HOST_OPTIONS, PIPELINE_FORMAT } from './pipeline-format';

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

const gateOnlyForbids = {
  anyOf: [
    { required: ['command'] },
    { required: ['cwd'] },
    { required: ['env'] },
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
      enum: ['run', 'gate'],
      description:
        'run: runs command. gate: asks the operator. Default: run with command, gate with message.',
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
  },
  allOf: [
    {
      if: { required: ['kind'], properties: { kind: { const: 'gate' } } },
      then: { required: ['message'], not: gateOnlyForbids },
    },
    {
      if: { required: ['kind'], properties: { kind: { const: 'run' } } },
      then: { required: ['command'], not: { required: ['message'] } },
    },
    {
      if: { not: { required: ['kind'] } },
      then: {
        oneOf: [
          { required: ['command'], not: { required: ['message'] } },
          { required: ['message'], not: gateOnlyForbids },
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
