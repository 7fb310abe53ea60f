import { StageflowError } from '@stageflow/contracts';

/** One problem in `config.yaml`, with where it is and what to do. */
export interface HostConfigProblem {
  /** Key path such as `browser.container.memory` or `browser.launch_args[2]`; `''` for the whole file. */
  path: string;
  /** 1-based line. */
  line: number;
  /** 1-based column. */
  column: number;
  /** Names the key path and says what to do. */
  message: string;
}

/**
 * `config.yaml` is invalid. Thrown at boot with every problem at once, so
 * one edit fixes them all; the Host refuses to start.
 */
export class HostConfigError extends StageflowError {
  declare readonly details: HostConfigProblem[];

  constructor(
    readonly file: string,
    problems: HostConfigProblem[],
  ) {
    const plural = problems.length === 1 ? 'problem' : 'problems';
    super(
      'host_config_invalid',
      `${file} is invalid (${problems.length} ${plural}); fix it and restart the Host:\n` +
        problems.map((p) => `- ${file}:${p.line}:${p.column}: ${p.message}`).join('\n'),
      500,
      problems,
    );
    this.name = 'HostConfigError';
  }
}

/** A stage field that touches a blocked site. `host` only: a URL may carry a token. */
export interface BlockedSiteConflict {
  /** The stage's YAML field, e.g. `browser.allow_domains[1]`, `browser.login_url`. */
  field: string;
  /** The host of the field's value (or the allow_domains pattern). */
  host: string;
  /** The `browser.blocked_sites` entry it touches. */
  site: string;
}

/**
 * A stage (or `sf browser check|login --url`) touches a site in
 * `browser.blocked_sites`. Raised when the stage starts, before a browser opens.
 */
export class BrowserSiteBlockedError extends StageflowError {
  declare readonly details: { stageId?: string; conflicts: BlockedSiteConflict[] };

  constructor(conflicts: BlockedSiteConflict[], stageId?: string) {
    const [first] = conflicts;
    const who = stageId ? `Stage "${stageId}"` : 'The browser';
    const more = conflicts.length > 1 ? ` (and ${conflicts.length - 1} more)` : '';
    super(
      'browser_site_blocked',
      first
        ? `${who} cannot start: ${first.field} (${first.host}) touches the blocked site ${first.site}${more}. ` +
            'The Host blocks it in browser.blocked_sites of $STAGEFLOW_HOME/config.yaml; remove it from the stage, or ask the Host operator.'
        : `${who} touches a blocked site.`,
      422,
      stageId ? { stageId, conflicts } : { conflicts },
    );
    this.name = 'BrowserSiteBlockedError';
  }
}

/** A Chrome switch computed by the Host itself is malformed: a bug, not an operator mistake. */
export class ChromeArgInvalidError extends StageflowError {
  constructor(arg: string, reason: string) {
    super('chrome_arg_invalid', `Chrome switch ${JSON.stringify(arg)} ${reason}.`, 500, { arg });
    this.name = 'ChromeArgInvalidError';
  }
}
