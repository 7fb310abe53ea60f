import { evaluateCondition } from '@stageflow/pipeline';
import type { ConditionAst, EdgeDefinition, Pipeline, StageDefinition } from '@stageflow/pipeline';
import type { RunState, StageState } from '@stageflow/contracts';
import { SchemaCheck, schemaMismatch } from '../schema/schema.check';
import type { PlanAction, PlanDeps, PlannedStage } from './run-plan';
import { planAdvance } from './run.scheduler';

const schemas = new SchemaCheck();
const deps: PlanDeps = {
  evaluate: evaluateCondition,
  checkInput: (stage, input) => {
    if (stage.inputSchema === undefined) return undefined;
    const problems = schemas.problems(stage.inputSchema, input);
    return problems.length ? schemaMismatch('input', problems) : undefined;
  },
};

function run(id: string, extra: Partial<StageDefinition> = {}): StageDefinition {
  return { id, kind: 'run', command: 'true', env: {}, timeoutSeconds: 60, retries: 0, ...extra } as StageDefinition;
}
function gate(id: string, message = `approve ${id}?`): StageDefinition {
  return { id, kind: 'gate', message, timeoutSeconds: 60, retries: 0 };
}
function edge(from: string, to: string, condition?: ConditionAst, text?: string): EdgeDefinition {
  return { from, to, ...(condition ? { condition, if: text } : {}) };
}
function pipeline(stages: StageDefinition[], edges: EdgeDefinition[], maxActiveStages = 4): Pipeline {
  return { version: 1, name: 'p', maxActiveStages, stages, edges };
}
/** `output.<field>` as the parser would build it. */
const outputField = (field: string): ConditionAst => ({ type: 'path', root: 'output', path: [field] });
const not = (operand: ConditionAst): ConditionAst => ({ type: 'not', operand });

function states(
  p: Pipeline,
  given: Record<string, Partial<PlannedStage> & { state: StageState }> = {},
): Record<string, PlannedStage> {
  return Object.fromEntries(p.stages.map((s) => [s.id, { attempt: 0, ...(given[s.id] ?? { state: 'pending' }) }]));
}
function plan(
  p: Pipeline,
  given: Record<string, Partial<PlannedStage> & { state: StageState }> = {},
  runState: RunState = 'queued',
  input: unknown = {},
): PlanAction[] {
  return planAdvance(p, { runState, input, maxActiveStages: p.maxActiveStages, stages: states(p, given) }, deps);
}
const types = (actions: PlanAction[]) =>
  actions.map((a) => (a.type === 'run-state' ? `run:${a.state}` : `${a.type}:${a.stageId}`));

describe('planAdvance: the check → login → work topology', () => {
  // check → login has `if: !output.logged_in`; check → work and login → work have none (the spec's join topology).
  const topology = pipeline(
    [run('check'), run('login'), run('work')],
    [edge('check', 'login', not(outputField('logged_in')), '!output.logged_in'), edge('check', 'work'), edge('login', 'work')],
  );

  it('starts only the root', () => {
    expect(types(plan(topology))).toEqual(['stage-ready:check', 'stage-queued:check']);
  });

  it('skips login and runs work with check’s output when already logged in', () => {
    const actions = plan(topology, { check: { state: 'success', attempt: 1, output: { logged_in: true, user: 'ada' } } }, 'running');
    expect(types(actions)).toEqual(['stage-skipped:login', 'stage-ready:work', 'stage-queued:work']);
    expect(actions[0]).toMatchObject({ reason: 'the condition on edge check → login is false (if: !output.logged_in)' });
    expect(actions[1]).toMatchObject({ input: { logged_in: true, user: 'ada' } });
  });

  it('runs login first when logged out, then work with both outputs merged in edge order', () => {
    const loggedOut = { state: 'success' as const, attempt: 1, output: { logged_in: false, user: null } };
    expect(types(plan(topology, { check: loggedOut }, 'running'))).toEqual(['stage-ready:login', 'stage-queued:login']);

    const afterLogin = plan(
      topology,
      { check: loggedOut, login: { state: 'success', attempt: 1, output: { logged_in: true, cookie: 'x' } } },
      'running',
    );
    expect(types(afterLogin)).toEqual(['stage-ready:work', 'stage-queued:work']);
    expect(afterLogin[0]).toMatchObject({ input: { logged_in: true, user: null, cookie: 'x' } });
  });

  it('skips work when check → work also has an if that is false (the pitfall the spec warns about)', () => {
    const guarded = pipeline(topology.stages, [
      topology.edges[0],
      edge('check', 'work', outputField('logged_in'), 'output.logged_in'),
      edge('login', 'work'),
    ]);
    const actions = plan(
      guarded,
      {
        check: { state: 'success', attempt: 1, output: { logged_in: false } },
        login: { state: 'success', attempt: 1, output: { logged_in: true } },
      },
      'running',
    );
    expect(types(actions)).toEqual(['stage-skipped:work', 'run:success']);
    expect(actions[0]).toMatchObject({ reason: expect.stringContaining('edge check → work') });
  });
});

describe('planAdvance: skips and conditions', () => {
  it('propagates a skip down a chain in one plan and ends the run', () => {
    const p = pipeline([run('a'), run('b'), run('c'), run('d')], [
      edge('a', 'b', { type: 'literal', value: false }, 'false'),
      edge('b', 'c'),
      edge('c', 'd'),
    ]);
    const actions = plan(p, { a: { state: 'success', attempt: 1, output: {} } }, 'running');
    expect(types(actions)).toEqual(['stage-skipped:b', 'stage-skipped:c', 'stage-skipped:d', 'run:success']);
    expect(actions[1]).toMatchObject({ reason: 'every parent was skipped (b)' });
  });

  it('runs a join when one parent was skipped and the other succeeded', () => {
    const p = pipeline([run('a'), run('b'), run('j')], [edge('a', 'j'), edge('b', 'j')]);
    const actions = plan(
      p,
      { a: { state: 'skipped' }, b: { state: 'success', attempt: 1, output: { n: 1 } } },
      'running',
    );
    expect(actions[0]).toEqual({ type: 'stage-ready', stageId: 'j', input: { n: 1 } });
  });

  it('waits for every parent of a join', () => {
    const p = pipeline([run('a'), run('b'), run('j')], [edge('a', 'j'), edge('b', 'j')]);
    expect(plan(p, { a: { state: 'success', attempt: 1, output: {} }, b: { state: 'running', attempt: 1 } }, 'running')).toEqual([]);
  });

  it('reads the run input in conditions and merges later edges over earlier ones', () => {
    const p = pipeline([run('a'), run('b'), run('j')], [
      edge('a', 'j', { type: 'compare', op: '==', left: { type: 'path', root: 'input', path: ['mode'] }, right: { type: 'literal', value: 'full' } }),
      edge('b', 'j'),
    ]);
    const done = {
      a: { state: 'success' as const, attempt: 1, output: { k: 'a', onlyA: 1 } },
      b: { state: 'success' as const, attempt: 1, output: { k: 'b' } },
    };
    expect(plan(p, done, 'running', { mode: 'full' })[0]).toEqual({
      type: 'stage-ready',
      stageId: 'j',
      input: { k: 'b', onlyA: 1 },
    });
    expect(types(plan(p, done, 'running', { mode: 'quick' }))).toEqual(['stage-skipped:j', 'run:success']);
  });

  it('passes a single parent’s output through as is, even when it is not an object', () => {
    const p = pipeline([run('a'), run('b')], [edge('a', 'b')]);
    expect(plan(p, { a: { state: 'success', attempt: 1, output: [1, 2] } }, 'running')[0]).toEqual({
      type: 'stage-ready',
      stageId: 'b',
      input: [1, 2],
    });
  });

  it('gives roots the run input', () => {
    const p = pipeline([run('a')], []);
    expect(plan(p, {}, 'queued', { url: 'https://x' })[0]).toEqual({ type: 'stage-ready', stageId: 'a', input: { url: 'https://x' } });
  });
});

describe('planAdvance: slots', () => {
  const five = pipeline([run('s1'), run('s2'), run('s3'), run('s4'), run('s5')], [], 2);

  it('queues at most max_active_stages stages, in pipeline order', () => {
    const actions = plan(five);
    expect(actions.filter((a) => a.type === 'stage-queued').map((a) => (a as { stageId: string }).stageId)).toEqual(['s1', 's2']);
    expect(actions.filter((a) => a.type === 'stage-ready')).toHaveLength(5);
  });

  it('queues the next ready stage when a slot frees up, counting queued and running stages', () => {
    const actions = plan(
      five,
      {
        s1: { state: 'success', attempt: 1, output: {} },
        s2: { state: 'running', attempt: 1 },
        s3: { state: 'ready' },
        s4: { state: 'ready' },
        s5: { state: 'ready' },
      },
      'running',
    );
    expect(types(actions)).toEqual(['stage-queued:s3']);
  });

  it('does not count gates waiting for an operator against the slots', () => {
    const p = pipeline([gate('g'), run('r')], [], 1);
    expect(types(plan(p))).toEqual(['stage-ready:g', 'stage-ready:r', 'gate-opened:g', 'stage-queued:r']);
  });

  it('queues a human login gate as a job (a runner opens its browser), in a slot, at its attempt', () => {
    const login = {
      ...gate('login'),
      verify: 'browser_login',
      browser: { profile: 'p', headed: true, allowDomains: [], check: { url: 'https://a.test/', cookie: 'sid' } },
    } as StageDefinition;
    const p = pipeline([login, run('r')], [], 1);
    expect(types(plan(p))).toEqual(['stage-ready:login', 'stage-ready:r', 'stage-queued:login']);
    // Waiting for the operator, it holds no slot; the run says it waits for an operator.
    const waiting = plan(p, { login: { state: 'waiting', attempt: 1, reason: 'waiting for an operator to log in' }, r: { state: 'success' } }, 'running');
    expect(waiting).toEqual([{ type: 'run-state', state: 'waiting', reason: 'waiting for an operator' }]);
    // Accepted (ready again at the same attempt): queued for the check after Accept.
    expect(plan(p, { login: { state: 'ready', attempt: 1 }, r: { state: 'success' } }, 'waiting')).toContainEqual({
      type: 'stage-queued',
      stageId: 'login',
      attempt: 1,
    });
  });
});

describe('planAdvance: gates and run state', () => {
  const p = pipeline([run('a'), gate('approve', 'Ship it?'), run('ship')], [edge('a', 'approve'), edge('approve', 'ship')]);

  it('opens a gate and puts the run in waiting when nothing else is open', () => {
    const actions = plan(p, { a: { state: 'success', attempt: 1, output: { v: 1 } } }, 'running');
    expect(actions).toEqual([
      { type: 'stage-ready', stageId: 'approve', input: { v: 1 } },
      { type: 'gate-opened', stageId: 'approve', message: 'Ship it?' },
      { type: 'run-state', state: 'waiting', reason: 'waiting for an operator' },
    ]);
  });

  it('says which browser profile a run waits for when a parked stage is all that is left', () => {
    const reason = 'waiting for browser profile p held by run r0';
    const lease = pipeline([run('work', { browser: { profile: 'p', headed: true, allowDomains: [] } }), run('other')], [], 1);
    const actions = plan(lease, { work: { state: 'waiting', attempt: 1, reason }, other: { state: 'success', attempt: 1 } }, 'running');
    expect(actions).toEqual([{ type: 'run-state', state: 'waiting', reason }]);
  });

  it('queues a steps stage like a run stage, in a slot, and names its lease wait', () => {
    const browser = { profile: 'p', headed: true, allowDomains: [] };
    const steps: StageDefinition = {
      id: 'look',
      kind: 'steps',
      browser,
      steps: [{ action: 'goto', url: 'https://x.test' }],
      timeoutSeconds: 60,
      retries: 0,
    };
    const p = pipeline([steps, run('other')], [], 1);
    expect(types(plan(p))).toEqual(['stage-ready:look', 'stage-ready:other', 'stage-queued:look']);
    const reason = 'waiting for browser profile p held by run r0';
    const parked = plan(p, { look: { state: 'waiting', attempt: 1, reason }, other: { state: 'success', attempt: 1 } }, 'running');
    expect(parked).toEqual([{ type: 'run-state', state: 'waiting', reason }]);
  });

  it('does not count a stage parked for a lease against the slots', () => {
    const lease = pipeline([run('work'), run('other')], [], 1);
    const actions = plan(lease, { work: { state: 'waiting', attempt: 1, reason: 'waiting for browser profile p' }, other: { state: 'ready', attempt: 0 } }, 'running');
    expect(types(actions)).toEqual(['stage-queued:other']);
  });

  it('puts the run back to running once the gate is accepted', () => {
    const actions = plan(
      p,
      {
        a: { state: 'success', attempt: 1, output: {} },
        approve: { state: 'success', attempt: 1, output: { decision: 'accept' } },
      },
      'waiting',
    );
    expect(types(actions)).toEqual(['stage-ready:ship', 'stage-queued:ship', 'run:running']);
  });

  it('does nothing for a run that has ended', () => {
    expect(plan(p, {}, 'cancelled')).toEqual([]);
  });
});

describe('planAdvance: failures', () => {
  it('fails the run when a stage fails, cancelling every stage not yet ended and naming the stage', () => {
    const p = pipeline([run('a'), run('b'), run('c'), run('d')], [edge('a', 'd'), edge('b', 'd'), edge('c', 'd')]);
    const actions = plan(
      p,
      {
        a: { state: 'failed', attempt: 2, reason: 'exited with code 3' },
        b: { state: 'running', attempt: 1 },
        c: { state: 'success', attempt: 1, output: {} },
        d: { state: 'pending' },
      },
      'running',
    );
    expect(actions).toEqual([
      { type: 'stage-cancelled', stageId: 'b', reason: 'run failed: stage "a" failed', wasActive: true },
      { type: 'stage-cancelled', stageId: 'd', reason: 'run failed: stage "a" failed', wasActive: false },
      { type: 'run-state', state: 'failed', reason: 'stage "a" failed: exited with code 3' },
    ]);
  });

  it('fails the run on a timed-out stage', () => {
    const p = pipeline([run('a')], []);
    const last = plan(p, { a: { state: 'timed_out', attempt: 1 } }, 'running').at(-1);
    expect(last).toEqual({ type: 'run-state', state: 'failed', reason: 'stage "a" timed out' });
  });

  it('fails a stage whose input does not fit its input schema, naming the field, and fails the run', () => {
    const p = pipeline(
      [run('fetch', { inputSchema: { type: 'object', required: ['url'], properties: { url: { type: 'string' }, n: { type: 'integer' } } } }), run('other')],
      [],
    );
    const actions = plan(p, {}, 'queued', { n: 'three' });
    expect(actions[0]).toEqual({
      type: 'stage-failed',
      stageId: 'fetch',
      reason: 'input does not match input_schema: /url is required; /n must be integer',
    });
    expect(types(actions)).toEqual(['stage-failed:fetch', 'stage-cancelled:other', 'run:failed']);
  });
});
