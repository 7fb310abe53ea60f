import type { RunEvent, RunSummary } from '../api/api.types';
import { RunsListModel } from './runs-list.model';

const AT = (s: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, s)).toISOString();
const summary = (id: string, state: RunSummary['state'], updated: number, created = 0): RunSummary => ({
  id,
  pipeline: 'hello',
  state,
  input: {},
  createdAt: AT(created),
  updatedAt: AT(updated),
  maxActiveStages: 4,
});
const stateEvent = (runId: string, state: RunSummary['state'], at: number): RunEvent => ({ seq: 1, runId, type: 'run.state', at: AT(at), data: { state } });

describe('the runs list', () => {
  it('adds a run the moment it is created, newest first, and follows its state', () => {
    const list = new RunsListModel();
    list.mergePage([summary('a', 'success', 3, 1)]);
    expect(list.applyEvent({ seq: 1, runId: 'b', type: 'run.created', at: AT(5), data: { pipeline: 'deploy', stages: ['x'] } })).toBe(true);
    expect(list.list().map((r) => [r.id, r.state, r.pipeline])).toEqual([
      ['b', 'queued', 'deploy'],
      ['a', 'success', 'hello'],
    ]);
    list.applyEvent(stateEvent('b', 'running', 6));
    list.applyEvent(stateEvent('b', 'success', 8));
    expect(list.list()[0]).toMatchObject({ id: 'b', state: 'success', endedAt: AT(8) });
    // Log lines and stage events do not touch the list.
    expect(list.applyEvent({ seq: 2, runId: 'b', type: 'stage.log', at: AT(9), data: { stream: 'stdout', line: 'x' } })).toBe(false);
  });

  it('a page read before a change never rolls it back, whichever arrives first', () => {
    const list = new RunsListModel();
    list.mergePage([summary('a', 'running', 2)]);
    list.applyEvent(stateEvent('a', 'success', 4));
    list.mergePage([summary('a', 'running', 2)]);
    expect(list.list()[0].state).toBe('success');
    // The event arrives before the run's page: it is applied when the page comes.
    list.applyEvent(stateEvent('c', 'failed', 7));
    expect(list.size).toBe(1);
    list.mergePage([summary('c', 'running', 5)]);
    expect(list.list().find((r) => r.id === 'c')?.state).toBe('failed');
    // An older event does not undo a newer page.
    list.mergePage([summary('d', 'success', 9)]);
    expect(list.applyEvent(stateEvent('d', 'running', 8))).toBe(false);
  });
});
