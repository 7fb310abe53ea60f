import type { BrowserBlock, BrowserCheck } from '../pipeline.model';
import {
  BROWSER_CHECK_KEYS,
  BROWSER_HOST_OPTIONS,
  BROWSER_KEYS,
  PIPELINE_FORMAT,
} from '../pipeline-format';
import type { Position } from './diagnostic.sink';
import type { Field, YamlNodeReader } from './yaml-node.reader';

/** A browser block as read, with the places later checks point at. */
export interface BrowserDraft {
  block: BrowserBlock;
  at: Position;
  /** Where `headed` is, or the block when it is left at its default. */
  headedAt: Position;
  headedSet: boolean;
  /** The keys are present (their values may still be wrong, which is reported on its own). */
  hasProfile: boolean;
  hasCheck: boolean;
}

const PROFILE = new RegExp(PIPELINE_FORMAT.profilePattern);
const DOMAIN = new RegExp(PIPELINE_FORMAT.domainPattern);
const COOKIE_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export function readBrowserBlock(
  reader: YamlNodeReader,
  field: Field,
  stageId: string,
): BrowserDraft | undefined {
  const what = `the browser block of stage "${stageId}"`;
  const fields = reader.fields(field, BROWSER_KEYS, what, (entry) => {
    // Own keys only: a YAML key such as `valueOf` must not find Object.prototype.
    if (!Object.hasOwn(BROWSER_HOST_OPTIONS, entry.key)) return false;
    const home = BROWSER_HOST_OPTIONS[entry.key];
    const where = home.startsWith('none:')
      ? `There is no YAML or config key for it (${home.slice(6)}).`
      : `Set it in the Host config ($STAGEFLOW_HOME/config.yaml, key ${home}).`;
    reader.error(
      'browser_host_option',
      entry,
      `"${entry.key}" is a Host launch option, not a pipeline setting: the Host decides how it starts browsers, and a stage cannot.`,
      `Remove "${entry.key}" from the stage. ${where}`,
      entry.keyAt,
    );
    return true;
  });
  if (!fields) return undefined;

  const block: BrowserBlock = { headed: true, allowDomains: [] };
  const profileField = fields.get('profile');
  const profile = reader.string(profileField, 'browser.profile');
  if (profileField && profile !== undefined) {
    const problem = profileProblem(profile);
    if (problem) {
      reader.error(
        'profile_not_a_name',
        profileField,
        `browser.profile ${JSON.stringify(profile)} is not a profile name: ${problem}. A profile is a name; the Host keeps its folder under $STAGEFLOW_HOME/browser/, and YAML never gives a path.`,
        `Use a short name matching ${PIPELINE_FORMAT.profilePattern}, e.g. profile: work-site.`,
      );
    } else {
      block.profile = profile;
    }
  }

  const headedField = fields.get('headed');
  const headed = reader.boolean(headedField, 'browser.headed');
  if (headed !== undefined) block.headed = headed;

  const domainsField = fields.get('allow_domains');
  if (domainsField) {
    for (const item of reader.items(domainsField, 'browser.allow_domains') ??
      []) {
      const domain = reader.string(item, 'an allow_domains entry', {
        nonEmpty: true,
      });
      if (domain === undefined) continue;
      const problem = domainProblem(domain);
      if (problem) {
        reader.error(
          'invalid_domain',
          item,
          `allow_domains entry ${JSON.stringify(domain)} is not a hostname: ${problem}.`,
          'Write a bare hostname such as example.com, or *.example.com for its subdomains; no scheme, port or path.',
        );
      } else {
        block.allowDomains.push(domain.toLowerCase());
      }
    }
  }

  const loginField = fields.get('login_url');
  const loginUrl = reader.string(loginField, 'browser.login_url');
  if (
    loginField &&
    loginUrl !== undefined &&
    checkUrl(reader, loginField, 'browser.login_url', loginUrl)
  ) {
    block.loginUrl = loginUrl;
  }

  const checkField = fields.get('check');
  if (checkField) {
    const check = readCheck(reader, checkField, stageId);
    if (check) block.check = check;
    if (!fields.has('profile')) {
      reader.error(
        'check_needs_profile',
        checkField,
        `Stage "${stageId}" has browser.check but no browser.profile. Without a profile the browser is thrown away, so it is always logged out.`,
        'Add browser.profile: <name> so the check reads the saved login.',
        checkField.keyAt,
      );
    }
  }

  return {
    block,
    at: field.keyAt,
    headedAt: headedField?.at ?? field.keyAt,
    headedSet: headed !== undefined,
    hasProfile: fields.has('profile'),
    hasCheck: fields.has('check'),
  };
}

function readCheck(
  reader: YamlNodeReader,
  field: Field,
  stageId: string,
): BrowserCheck | undefined {
  const fields = reader.fields(
    field,
    BROWSER_CHECK_KEYS,
    `browser.check of stage "${stageId}"`,
  );
  if (!fields) return undefined;
  const urlField = fields.get('url');
  const url = reader.string(urlField, 'browser.check.url');
  const urlOk =
    urlField !== undefined &&
    url !== undefined &&
    checkUrl(reader, urlField, 'browser.check.url', url);
  if (!urlField) {
    reader.error(
      'missing_field',
      field,
      `browser.check of stage "${stageId}" has no url.`,
      'Add url: https://… — the page the Host opens to judge the login.',
      field.keyAt,
    );
  }
  const check: Partial<BrowserCheck> = {};
  const loggedOut = reader.string(
    fields.get('logged_out_url'),
    'browser.check.logged_out_url',
    { nonEmpty: true },
  );
  const selector = reader.string(
    fields.get('selector'),
    'browser.check.selector',
    { nonEmpty: true },
  );
  const cookieField = fields.get('cookie');
  let cookie = reader.string(cookieField, 'browser.check.cookie', {
    nonEmpty: true,
  });
  if (cookieField && cookie !== undefined && !COOKIE_NAME.test(cookie)) {
    reader.error(
      'invalid_value',
      cookieField,
      `browser.check.cookie ${JSON.stringify(cookie)} is not a cookie name.`,
      'Give the name of the login cookie only (no "=", ";", spaces or value), e.g. cookie: session_id.',
    );
    cookie = undefined;
  }
  if (
    !fields.has('logged_out_url') &&
    !fields.has('selector') &&
    !fields.has('cookie')
  ) {
    reader.error(
      'missing_field',
      field,
      `browser.check of stage "${stageId}" has no criterion, so the Host cannot tell logged in from logged out.`,
      'Add at least one of logged_out_url (the page you land on when logged out), selector (present only when logged in) or cookie (set only when logged in).',
      field.keyAt,
    );
  }
  if (!urlOk) return undefined;
  check.url = url;
  if (loggedOut !== undefined) check.loggedOutUrl = loggedOut;
  if (selector !== undefined) check.selector = selector;
  if (cookie !== undefined) check.cookie = cookie;
  return check as BrowserCheck;
}

export function checkUrl(
  reader: YamlNodeReader,
  field: Field,
  what: string,
  value: string,
): boolean {
  let problem: string | undefined;
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      problem = `it uses ${url.protocol.slice(0, -1)}:, not http or https`;
    else if (url.username || url.password)
      problem = 'it carries a user name or password';
  } catch {
    problem = 'it is not an absolute URL';
  }
  if (!problem) return true;
  reader.error(
    'invalid_url',
    field,
    `${what} ${JSON.stringify(value)} is not usable: ${problem}.`,
    'Write a full http:// or https:// address, e.g. https://example.com/login. Never put credentials in a URL.',
  );
  return false;
}

/** Why `value` is not a safe profile name (one path segment, no tricks), or undefined. */
export function profileProblem(value: string): string | undefined {
  if (value.includes('\u0000')) return 'it contains a NUL character';
  if (value.includes('/') || value.includes('\\'))
    return 'it contains a path separator';
  if (value.includes('..')) return 'it contains ".."';
  if (value.includes('~')) return 'it contains "~"';
  if (value.length > 64)
    return `it is ${value.length} characters long (at most 64)`;
  if (value === '') return 'it is empty';
  if (!PROFILE.test(value))
    return 'it must start with a letter or digit and use only letters, digits, ".", "_" and "-"';
  return undefined;
}

function domainProblem(value: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value))
    return 'it has a scheme (drop "http://")';
  if (value.includes('/')) return 'it has a path';
  if (value.includes(':')) return 'it has a port';
  if (value.includes('*') && !/^\*\.[^*]+$/.test(value))
    return 'a wildcard may only be a leading "*."';
  if (!DOMAIN.test(value))
    return 'it must be labels of letters, digits and "-" separated by dots';
  return undefined;
}
