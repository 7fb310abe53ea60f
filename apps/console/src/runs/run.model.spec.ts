import type { RunEvent, RunView } from '../api/api.types';
import { applyRunEvent, canWatchBrowser, isLoginGate, MAX_LOG_LINES, openGates, runModelFromView } from './run.model';

const AT = (s: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, s)).toISOString();

function view(): RunView {
  return {
    id: 'r1',
    pipeline: 'login',
    state: 'running',
    input: { ticket: 7 },
    createdAt: AT(0),
    updatedAt: AT(0),
    maxActiveStages: 4,
    edges: [{ from: 'check', to: 'login', if: 'not output.logged_in' }],
    stages: [
      { runId: 'r1', id: 'check', kind: 'run', state: 'pending', attempt: 0, maxAttempts: 2, logTail: ['old tail line'], browser: { profile: 'work', headed: true } },
      { runId: 'r1', id: 'login', kind: 'gate', state: 'pending', attempt: 0, maxAttempts: 1, logTail: [], verify: 'browser_login', browser: { profile: 'work', headed: true } },
    ],
  };
}

let seq = 0;
function ev<T extends RunEvent['type']>(type: T, data: RunEvent<T>['data'], stageId?: string): RunEvent {
  seq++;
  return { seq, runId: 'r1', type, at: AT(seq), data, ...(stageId ? { stageId } : {}) };
}

describe('the run page model', () => {
  beforeEach(() => (seq = 0));

  it('follows a run from its history: states, reasons, logs per attempt, envelope, gate and answer', () => {
    const model = runModelFromView(view());
    // The view's log tail is not shown: the history's stage.log events carry every line.
    expect(model.stages[0].logs).toEqual([]);
    const history = [
      ev('run.created', { pipeline: 'login', stages: ['check', 'login'] }),
      ev('run.state', { state: 'running' }),
      ev('stage.state', { state: 'queued', attempt: 1 }, 'check'),
      ev('stage.state', { state: 'waiting', attempt: 1, reason: 'waiting for browser profile work held by run r0' }, 'check'),
      ev('stage.state', { state: 'running', attempt: 1 }, 'check'),
      ev('stage.log', { stream: 'stdout', line: 'first try' }, 'check'),
      ev('stage.state', { state: 'queued', attempt: 2, reason: 'exited with code 4; retrying, attempt 2 of 2' }, 'check'),
      ev('stage.state', { state: 'running', attempt: 2 }, 'check'),
      ev('stage.log', { stream: 'stderr', line: '<img src=x onerror=alert(1)>' }, 'check'),
      ev('stage.output', { envelope: { ok: true, stage: 'check', attempt: 2, output: { logged_in: false }, artifacts: [], durationMs: 40 } }, 'check'),
      ev('stage.state', { state: 'success', attempt: 2 }, 'check'),
      ev('gate.opened', { message: 'Log in to work' }, 'login'),
      ev('stage.state', { state: 'waiting', attempt: 1, reason: 'waiting for an operator at gate: Log in to work' }, 'login'),
    ];
    const reasons: (string | undefined)[] = [];
    for (const e of history) {
      expect(applyRunEvent(model, e)).toBe(true);
      reasons.push(model.stages[0].reason);
    }
    expect(reasons).toContain('waiting for browser profile work held by run r0');
    const [check, login] = model.stages;
    expect(check).toMatchObject({ state: 'success', attempt: 2, reason: undefined, envelope: { output: { logged_in: false } }, endedAt: AT(11) });
    expect(check.logs).toEqual([
      { attempt: 1, stream: 'stdout', line: 'first try' },
      { attempt: 2, stream: 'stderr', line: '<img src=x onerror=alert(1)>' },
    ]);
    expect(openGates(model).map((s) => s.id)).toEqual(['login']);
    expect(isLoginGate(login)).toBe(true);

    applyRunEvent(model, ev('gate.answered', { decision: 'accept', note: 'done' }, 'login'));
    expect(openGates(model)).toEqual([]);
    expect(login.gate).toEqual({ message: 'Log in to work', answer: { decision: 'accept', note: 'done', at: AT(14) } });
    applyRunEvent(model, ev('run.state', { state: 'success' }));
    expect(model).toMatchObject({ state: 'success', endedAt: AT(15), lastSeq: 15 });
  });

  it('opens no gate panel for a login gate that waits for its browser profile, only once the gate opens', () => {
    const model = runModelFromView(view());
    applyRunEvent(model, ev('stage.state', { state: 'queued', attempt: 1 }, 'login'));
    applyRunEvent(model, ev('stage.state', { state: 'waiting', attempt: 1, reason: 'waiting for browser profile work held by run r0' }, 'login'));
    expect(openGates(model)).toEqual([]);
    applyRunEvent(model, ev('stage.state', { state: 'running', attempt: 1 }, 'login'));
    expect(openGates(model)).toEqual([]);
    applyRunEvent(model, ev('gate.opened', { message: 'Log in to work' }, 'login'));
    applyRunEvent(model, ev('stage.state', { state: 'waiting', attempt: 1, reason: 'waiting for an operator at gate: Log in to work' }, 'login'));
    expect(openGates(model).map((s) => s.id)).toEqual(['login']);
  });

  it('applies each seq once and ignores other runs', () => {
    const model = runModelFromView(view());
    const log = ev('stage.log', { stream: 'stdout', line: 'once' }, 'check');
    expect(applyRunEvent(model, log)).toBe(true);
    expect(applyRunEvent(model, log)).toBe(false);
    expect(applyRunEvent(model, { ...ev('stage.log', { stream: 'stdout', line: 'x' }, 'check'), runId: 'r2' })).toBe(false);
    expect(model.stages[0].logs.map((l) => l.line)).toEqual(['once']);
  });

  it('keeps the last lines of a long log and counts what it dropped', () => {
    const model = runModelFromView(view());
    for (let i = 0; i < MAX_LOG_LINES + 5; i++) applyRunEvent(model, ev('stage.log', { stream: 'stdout', line: `line ${i}` }, 'check'));
    expect(model.stages[0].logs).toHaveLength(MAX_LOG_LINES);
    expect(model.stages[0].logsDropped).toBe(5);
    expect(model.stages[0].logs[0].line).toBe('line 5');
  });

  it('offers "Watch browser" only on a running browser stage', () => {
    const model = runModelFromView(view());
    expect(canWatchBrowser(model.stages[0])).toBe(false);
    applyRunEvent(model, ev('stage.state', { state: 'running', attempt: 1 }, 'check'));
    expect(canWatchBrowser(model.stages[0])).toBe(true);
    model.stages[0].browser = undefined;
    expect(canWatchBrowser(model.stages[0])).toBe(false);
  });

  it('keeps run warnings and ignores event types it does not know', () => {
    const model = runModelFromView(view());
    applyRunEvent(model, ev('run.warning', { code: 'headless_fallback', message: 'runs headless' }));
    expect(applyRunEvent(model, { seq: 99, runId: 'r1', type: 'stage.future' as RunEvent['type'], at: AT(1), data: {} } as RunEvent)).toBe(true);
    expect(model.warnings).toEqual([{ code: 'headless_fallback', message: 'runs headless', at: AT(1) }]);
  });
});
