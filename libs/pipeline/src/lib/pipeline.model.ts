/**
 * The validated, normalised form of a pipeline (format v1). The loader turns
 * YAML into this; the engine only ever sees this shape. Field names follow the
 * YAML (snake_case in YAML, camelCase here).
 */
export interface Pipeline {
  /** Format version; `1` today. */
  version: 1;
  name: string;
  description?: string;
  /** At most this many stages of one run are queued or running at once. @defaultValue 4 */
  maxActiveStages: number;
  stages: StageDefinition[];
  edges: EdgeDefinition[];
}

export type StageKind = 'run' | 'gate' | 'steps';

interface StageBase {
  id: string;
  kind: StageKind;
  description?: string;
  /** JSON Schema the stage's input must satisfy (checked before it starts). */
  inputSchema?: JsonSchema;
  /** JSON Schema the stage's output must satisfy (checked when it ends). */
  outputSchema?: JsonSchema;
  /** Seconds before the stage is stopped (SIGTERM, then SIGKILL). @defaultValue 600 */
  timeoutSeconds: number;
  /** Extra attempts after a failure. @defaultValue 0 */
  retries: number;
  browser?: BrowserBlock;
  /** `browser_login`: after a gate is accepted, the host re-checks the login (browser issue). */
  verify?: 'browser_login';
}

export interface RunStageDefinition extends StageBase {
  kind: 'run';
  /** A string runs through `/bin/sh -c`; a list is argv, run directly. */
  command: string | string[];
  /** Working directory, relative to the runner's work dir or absolute. */
  cwd?: string;
  env: Record<string, string>;
}

export interface GateStageDefinition extends StageBase {
  kind: 'gate';
  /** What the operator is asked. */
  message: string;
}

/**
 * Built-in browser actions on the stage's own tab, run in order by the
 * runner: no command, no external agent. Needs a `browser:` block.
 */
export interface StepsStageDefinition extends StageBase {
  kind: 'steps';
  browser: BrowserBlock;
  /** At least one. */
  steps: StepAction[];
}

export type StageDefinition =
  | RunStageDefinition
  | GateStageDefinition
  | StepsStageDefinition;

/** A stage the runner executes as a queue job (and that may need a profile lease): not a gate. */
export type JobStageDefinition = RunStageDefinition | StepsStageDefinition;

/** One action of a `steps` stage. Values are literals from the YAML (there is no templating). */
export type StepAction =
  | GotoStep
  | ClickStep
  | FillStep
  | PressStep
  | WaitForStep
  | ExtractStep
  | ScreenshotStep;

interface StepBase {
  /**
   * Most seconds the step may take (waiting for its element, page or
   * condition), never more than what is left of the stage's timeout.
   * Absent: the action's default (see STEP_DEFAULT_TIMEOUT_SECONDS).
   */
  timeoutSeconds?: number;
}

/** Opens an http(s) URL in the tab and waits for its load event. */
export interface GotoStep extends StepBase {
  action: 'goto';
  url: string;
}

/** Clicks the centre of the first visible element matching a CSS selector. */
export interface ClickStep extends StepBase {
  action: 'click';
  selector: string;
}

/** Replaces the text of an input, textarea or contenteditable element. */
export interface FillStep extends StepBase {
  action: 'fill';
  selector: string;
  value: string;
}

/** Presses one key, on the focused element or on `selector` (focused first). */
export interface PressStep extends StepBase {
  action: 'press';
  key: string;
  selector?: string;
}

/** Waits until an element is visible, the URL matches, or the page shows a text. */
export interface WaitForStep extends StepBase {
  action: 'wait_for';
  condition: 'selector' | 'url' | 'text';
  /** A CSS selector; a URL pattern (substring, or a glob with `*` matched against the whole URL); or a text. */
  value: string;
}

/** Reads an element's text (default) or one of its attributes into output field `field`. */
export interface ExtractStep extends StepBase {
  action: 'extract';
  field: string;
  selector: string;
  attribute?: string;
}

/** Saves a PNG of the tab as the attempt's artifact `name`. */
export interface ScreenshotStep extends StepBase {
  action: 'screenshot';
  name: string;
  /** The whole page, not only the viewport. @defaultValue false */
  fullPage: boolean;
}

export interface EdgeDefinition {
  from: string;
  to: string;
  /** Source text of the condition, as written. */
  if?: string;
  /** Parsed condition; evaluate with `evaluateCondition`. */
  condition?: ConditionAst;
}

/** The `browser:` block. Launch options (flags, paths, display) belong to host config, never here. */
export interface BrowserBlock {
  /** A profile name (one safe path segment); absent → a throw-away browser. */
  profile?: string;
  /** @defaultValue true */
  headed: boolean;
  allowDomains: string[];
  loginUrl?: string;
  check?: BrowserCheck;
}

/** How the host judges "logged in" for a check stage. At least one criterion. */
export interface BrowserCheck {
  url: string;
  /** Logged out if the final URL matches this pattern (substring or glob with `*`). */
  loggedOutUrl?: string;
  /** Logged in if this CSS selector is present. */
  selector?: string;
  /** Logged in if a cookie with this name is set for the check URL. */
  cookie?: string;
}

export type JsonSchema = Record<string, unknown> | boolean;

/** Expression tree of an `if`. Built by the parser, never by `eval`. */
export type ConditionAst =
  | { type: 'literal'; value: string | number | boolean | null }
  | { type: 'path'; root: string; path: string[] }
  | { type: 'not'; operand: ConditionAst }
  | { type: 'and' | 'or'; left: ConditionAst; right: ConditionAst }
  | { type: 'compare'; op: '==' | '!=' | '<' | '<=' | '>' | '>='; left: ConditionAst; right: ConditionAst };
