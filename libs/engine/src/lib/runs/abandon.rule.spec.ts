import { judgeRun, SweptStage } from './abandon.rule';

const stage = (id: string, state: SweptStage['state'], extra: Partial<SweptStage> = {}): SweptStage => ({
  id,
  state,
  attempt: 1,
  missingJobChecks: 0,
  ...extra,
});

describe('judgeRun (abandoned rule)', () => {
  it('abandons a run none of whose stages can move', () => {
    const verdict = judgeRun([stage('a', 'success'), stage('b', 'pending')]);
    expect(verdict.abandon).toBe('nothing can make progress: no stage is ready, queued, running or waiting');
  });

  it('keeps a run whose only open stage is a gate waiting for an operator', () => {
    expect(judgeRun([stage('a', 'success'), stage('g', 'waiting'), stage('b', 'pending')]).abandon).toBeUndefined();
  });

  it('counts a queued stage without a job once, and abandons on the second check in a row', () => {
    const first = judgeRun([stage('a', 'queued', { jobAlive: false })]);
    expect(first).toEqual({ missingJobChecks: { a: 1 } });
    const second = judgeRun([stage('a', 'queued', { jobAlive: false, missingJobChecks: 1 })]);
    expect(second.abandon).toBe(
      'stage "a" is queued (attempt 1) but its job is gone from the stage queue (2 checks in a row); no runner will pick it up',
    );
  });

  it('resets the count when the job shows up (it is added a moment after the stage is queued)', () => {
    expect(judgeRun([stage('a', 'running', { jobAlive: true, missingJobChecks: 1 })])).toEqual({ missingJobChecks: { a: 0 } });
  });
});
