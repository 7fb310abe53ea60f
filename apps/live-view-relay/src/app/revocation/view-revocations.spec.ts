import type { RunEvent } from '@stageflow/contracts';
import { viewEndOf } from './view-revocations.service';

const event = (type: RunEvent['type'], data: unknown, stageId?: string): RunEvent =>
  ({ seq: 1, runId: 'r1', type, at: '2026-01-01T00:00:00Z', data, ...(stageId ? { stageId } : {}) }) as RunEvent;

describe('which live views an event ends', () => {
  it('a gate answer ends its stage\'s interactive views', () => {
    expect(viewEndOf(event('gate.answered', { decision: 'accept' }, 'login'))).toEqual({ kind: 'gate-answered', runId: 'r1', stageId: 'login' });
  });

  it('a stage attempt that ended ends its views; a retry ends the older attempts\' views', () => {
    expect(viewEndOf(event('stage.state', { state: 'success', attempt: 2 }, 'login'))).toEqual({ kind: 'stage-ended', runId: 'r1', stageId: 'login', attempt: 2 });
    expect(viewEndOf(event('stage.state', { state: 'cancelled', attempt: 1 }, 'login'))).toMatchObject({ attempt: 1 });
    expect(viewEndOf(event('stage.state', { state: 'queued', attempt: 2 }, 'login'))).toEqual({ kind: 'stage-ended', runId: 'r1', stageId: 'login', attempt: 1 });
  });

  it('a stage still going ends nothing', () => {
    expect(viewEndOf(event('stage.state', { state: 'running', attempt: 1 }, 'login'))).toBeUndefined();
    expect(viewEndOf(event('stage.state', { state: 'waiting', attempt: 1 }, 'login'))).toBeUndefined();
    expect(viewEndOf(event('stage.log', { stream: 'stdout', line: 'x' }, 'login'))).toBeUndefined();
  });

  it('a run that ended ends every view of it; a run going on none', () => {
    for (const state of ['success', 'failed', 'cancelled', 'abandoned']) {
      expect(viewEndOf(event('run.state', { state }))).toEqual({ kind: 'run-ended', runId: 'r1', state });
    }
    expect(viewEndOf(event('run.state', { state: 'waiting' }))).toBeUndefined();
  });
});
