import type { StageRecord } from '@stageflow/contracts';
import type { Pipeline } from '@stageflow/pipeline';
import { edgeViews, stageViews } from './run-view';

const pipeline: Pipeline = {
  version: 1,
  name: 'login',
  maxActiveStages: 4,
  stages: [
    {
      id: 'check',
      kind: 'run',
      command: 'true',
      env: { SECRET_ENV: 'x' },
      timeoutSeconds: 60,
      retries: 0,
      description: 'Is the profile logged in?',
      browser: { profile: 'work', headed: false, allowDomains: ['example.com'], check: { url: 'https://example.com/account' } },
    },
    {
      id: 'login',
      kind: 'gate',
      message: 'Log in',
      timeoutSeconds: 60,
      retries: 0,
      verify: 'browser_login',
      browser: { profile: 'work', headed: true, allowDomains: [], loginUrl: 'https://example.com/login' },
    },
    { id: 'scrape', kind: 'run', command: 'true', env: {}, timeoutSeconds: 60, retries: 0, browser: { headed: true, allowDomains: [] } },
  ],
  edges: [
    { from: 'check', to: 'login', if: 'not output.logged_in', condition: { type: 'literal', value: true } },
    { from: 'check', to: 'scrape' },
  ],
};

const record = (id: string, kind: string): StageRecord => ({ runId: 'r', id, kind, state: 'pending', attempt: 0, maxAttempts: 1, logTail: [] });

describe('the run view of a snapshot', () => {
  it('adds description, browser profile and verify to each stage, and nothing else of the definition', () => {
    const views = stageViews([record('check', 'run'), record('login', 'gate'), record('scrape', 'run')], pipeline);
    expect(views).toEqual([
      { ...record('check', 'run'), description: 'Is the profile logged in?', browser: { profile: 'work', headed: false } },
      { ...record('login', 'gate'), verify: 'browser_login', browser: { profile: 'work', headed: true } },
      { ...record('scrape', 'run'), browser: { headed: true } },
    ]);
    // Commands, env, allow lists and URLs stay inside the Host.
    expect(JSON.stringify(views)).not.toMatch(/SECRET_ENV|example\.com/);
  });

  it('lists the edges with the condition as written, not its parsed form', () => {
    expect(edgeViews(pipeline)).toEqual([
      { from: 'check', to: 'login', if: 'not output.logged_in' },
      { from: 'check', to: 'scrape' },
    ]);
  });
});
