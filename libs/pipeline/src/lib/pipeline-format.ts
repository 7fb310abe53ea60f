/**
 * Names, patterns and limits of pipeline format v1, shared by the loader and
 * the editor JSON Schema so the two cannot disagree.
 */
export const PIPELINE_FORMAT = {
  /** Source larger than this is refused before parsing. */
  maxSourceBytes: 1024 * 1024,
  /** Passed to `yaml`'s `maxAliasCount`: stops "billion laughs" alias bombs. */
  maxAliasCount: 100,
  namePattern: '^[a-z0-9][a-z0-9-_]{0,63}$',
  stageIdPattern: '^[A-Za-z][A-Za-z0-9_-]{0,63}$',
  envKeyPattern: '^[A-Za-z_][A-Za-z0-9_]*$',
  profilePattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$',
  domainPattern:
    '^(\\*\\.)?(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$',
  /** Host-managed variables; a stage cannot set them. */
  reservedEnvPrefix: 'STAGEFLOW_',
  /** Set by the Host on browser stages (CDP address, tab pinning). */
  browserEnvPrefix: 'AGENT_BROWSER_',
  maxActiveStages: { default: 4, min: 1, max: 64 },
  timeoutSeconds: { default: 600, min: 1, max: 86_400 },
  retries: { default: 0, min: 0, max: 10 },
  /** Name of an `extract` output field: usable as `output.<field>` in an `if`. */
  outputFieldPattern: '^[A-Za-z_][A-Za-z0-9_]{0,63}$',
  /** A screenshot's artifact name: one safe file name ending in `.png` (see ARTIFACT_NAME_PATTERN). */
  screenshotNamePattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,123}\\.png$',
  /** An HTML attribute name for `extract.attribute`. */
  attributePattern: '^[^\\s"\'<>/=]{1,256}$',
} as const;

/** The actions of a `steps` stage, in the order the catalog lists them. */
export const STEP_ACTIONS = [
  'goto',
  'click',
  'fill',
  'press',
  'wait_for',
  'extract',
  'screenshot',
] as const;
export type StepActionName = (typeof STEP_ACTIONS)[number];

/**
 * Keys of each action's mapping form, and the key its short (scalar) form
 * stands for: `- click: "#login"` is `- click: {selector: "#login"}`.
 */
export const STEP_ACTION_KEYS: Readonly<
  Record<StepActionName, { keys: readonly string[]; required: readonly string[]; short?: string }>
> = {
  goto: { keys: ['url', 'timeout_seconds'], required: ['url'], short: 'url' },
  click: { keys: ['selector', 'timeout_seconds'], required: ['selector'], short: 'selector' },
  fill: { keys: ['selector', 'value', 'timeout_seconds'], required: ['selector', 'value'] },
  press: { keys: ['key', 'selector', 'timeout_seconds'], required: ['key'], short: 'key' },
  wait_for: { keys: ['selector', 'url', 'text', 'timeout_seconds'], required: [] },
  extract: { keys: ['field', 'selector', 'attribute', 'timeout_seconds'], required: ['field', 'selector'] },
  screenshot: { keys: ['name', 'full_page', 'timeout_seconds'], required: ['name'], short: 'name' },
};

/** What a `wait_for` waits for: exactly one of these keys. */
export const WAIT_FOR_CONDITIONS = ['selector', 'url', 'text'] as const;

/**
 * Seconds a step may take when it sets no `timeout_seconds`: loading a page
 * or waiting for a condition gets longer than finding an element.
 */
export const STEP_DEFAULT_TIMEOUT_SECONDS: Readonly<Record<StepActionName, number>> = {
  goto: 30,
  click: 10,
  fill: 10,
  press: 10,
  wait_for: 30,
  extract: 10,
  screenshot: 30,
};

/**
 * Named keys `press` knows (names as in KeyboardEvent.key). Any other single
 * printable character is pressed as itself. Modifier chords are not supported.
 */
export const PRESS_KEYS = [
  'Enter',
  'Tab',
  'Escape',
  'Backspace',
  'Delete',
  'Space',
  'ArrowUp',
  'ArrowDown',
  'ArrowLeft',
  'ArrowRight',
  'Home',
  'End',
  'PageUp',
  'PageDown',
] as const;
export type PressKeyName = (typeof PRESS_KEYS)[number];

export const PIPELINE_KEYS = [
  'version',
  'name',
  'description',
  'max_active_stages',
  'stages',
  'edges',
] as const;
export const STAGE_KEYS = [
  'id',
  'kind',
  'description',
  'command',
  'cwd',
  'env',
  'timeout_seconds',
  'retries',
  'input_schema',
  'output_schema',
  'browser',
  'verify',
  'message',
  'steps',
] as const;
export const EDGE_KEYS = ['from', 'to', 'if'] as const;
export const BROWSER_KEYS = [
  'profile',
  'headed',
  'allow_domains',
  'login_url',
  'check',
] as const;
export const BROWSER_CHECK_KEYS = [
  'url',
  'logged_out_url',
  'selector',
  'cookie',
] as const;
export const VERIFY_VALUES = ['browser_login'] as const;

/**
 * Keys people put under `browser:` that are Host settings. Value: where the
 * setting lives in `$STAGEFLOW_HOME/config.yaml`, or why there is none.
 */
export const BROWSER_HOST_OPTIONS: Readonly<Record<string, string>> = {
  launch_args: 'browser.launch_args',
  args: 'browser.launch_args',
  executable_path: 'browser.executable_path',
  executable: 'browser.executable_path',
  display: 'none: the Host uses its own DISPLAY / WAYLAND_DISPLAY, or Xvfb',
  dialog_timeout_seconds: 'browser.dialog_timeout_seconds',
  blocked_sites: 'browser.blocked_sites',
  host: 'browser.host',
  container: 'browser.container',
  owner_hosts: 'browser.owner_hosts',
  scope: 'none: the Host sets the owner scope',
};
