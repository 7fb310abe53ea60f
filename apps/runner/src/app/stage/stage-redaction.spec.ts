import type { AttemptResult } from '@stageflow/engine';
import { stageRedaction } from './stage-redaction';

const browser = { browser: { profile: 'p', headed: true, allowDomains: [] } };
const secretLine = 'Set-Cookie token: {"password":"hunter2"}';
const result: AttemptResult = {
  state: 'failed',
  reason: 'exited with code 1; Authorization: Bearer abc.def.ghi-123456789',
  logTail: ['{"password":"hunter2"}'],
  envelope: {
    ok: false,
    stage: 'work',
    attempt: 1,
    output: { session: { password: 'hunter2' }, page: 'https://site.test/home' },
    artifacts: [],
    durationMs: 5,
    error: 'Authorization: Bearer abc.def.ghi-123456789',
  },
};

describe('stageRedaction', () => {
  it('redacts log lines, the tail, the reason and the envelope of a browser stage', () => {
    const r = stageRedaction(browser);
    const [line] = r.lines([{ stream: 'stdout', line: secretLine }]);
    expect(line.stream).toBe('stdout');
    expect(line.line).not.toContain('hunter2');
    expect(r.tail(['{"password":"hunter2"}'])).toEqual(['{"password":"[redacted:password]"}']);

    const out = r.result(result);
    const text = JSON.stringify(out);
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('abc.def.ghi-123456789');
    // What is no secret survives, so the envelope still hands the page on.
    expect(out.envelope?.output).toMatchObject({ page: 'https://site.test/home' });
    expect(out.reason).toMatch(/^exited with code 1; /);
  });

  it('leaves a stage without a browser block as written', () => {
    const r = stageRedaction({});
    expect(r.lines([{ stream: 'stderr', line: secretLine }])).toEqual([{ stream: 'stderr', line: secretLine }]);
    expect(r.result(result)).toEqual(result);
  });
});
