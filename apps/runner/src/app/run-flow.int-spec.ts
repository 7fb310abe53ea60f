import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { RunEvent } from '@stageflow/contracts';
import type { ConditionAst } from '@stageflow/pipeline';
import {
  allEvents,
  ECHO_INPUT,
  gateStage,
  Harness,
  pipelineOf,
  runStage,
  startHarness,
  waitFor,
  waitForRun,
} from '../testing/runner.harness';

const outputGreaterThan = (field: string, n: number): ConditionAst => ({
  type: 'compare',
  op: '>',
  left: { type: 'path', root: 'output', path: [field] },
  right: { type: 'literal', value: n },
});

function stateEvents(events: RunEvent[], stageId: string): string[] {
  return events
    .filter((e) => e.stageId === stageId && e.type === 'stage.state')
    .map((e) => (e as RunEvent<'stage.state'>).data.state);
}

describe('a run end to end (real worker, real sh)', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  // prep ─┬─ wide (if output.n > 1) ─┬─ join ─ approve (gate) ─ ship
  //       ├─ narrow (if output.n > 5) ┤
  //       └─ plain ───────────────────┘
  const flow = pipelineOf(
    [
      runStage('prep', `printf '{"n": 3, "from": "prep"}' > "$STAGEFLOW_OUTPUT"`),
      runStage('wide', `printf '{"wide": true, "n": %s}' "$(sed 's/.*"n": *\\([0-9]*\\).*/\\1/' "$STAGEFLOW_INPUT")" > "$STAGEFLOW_OUTPUT"`),
      runStage('narrow', `printf '{"narrow": true}' > "$STAGEFLOW_OUTPUT"`),
      runStage('plain', `echo "plain says hi"; printf '{"plain": true, "from": "plain"}' > "$STAGEFLOW_OUTPUT"`),
      runStage('join', ECHO_INPUT),
      gateStage('approve', 'Ship the result?'),
      runStage('ship', ECHO_INPUT),
    ],
    [
      { from: 'prep', to: 'wide', if: 'output.n > 1', condition: outputGreaterThan('n', 1) },
      { from: 'prep', to: 'narrow', if: 'output.n > 5', condition: outputGreaterThan('n', 5) },
      { from: 'prep', to: 'plain' },
      { from: 'wide', to: 'join' },
      { from: 'plain', to: 'join' },
      { from: 'join', to: 'approve' },
      { from: 'approve', to: 'ship' },
    ],
  );

  it('runs branches in parallel, skips a false condition, joins, waits at the gate and finishes when accepted', async () => {
    const started = await h.runs.startRun({ pipeline: flow, input: { ticket: 7 } });
    // The root is queued before startRun returns; a runner may already have started it.
    expect(started.stages.find((s) => s.id === 'prep')?.state).toMatch(/^(queued|running|success)$/);

    const waiting = await waitForRun(h.runs, started.id, ['waiting']);
    const byId = Object.fromEntries(waiting.stages.map((s) => [s.id, s]));
    expect(byId['narrow'].state).toBe('skipped');
    expect(byId['narrow'].reason).toBe('the condition on edge prep → narrow is false (if: output.n > 5)');
    expect(byId['join'].envelope?.output).toEqual({ wide: true, n: 3, plain: true, from: 'plain' });
    expect(byId['plain'].logTail).toEqual(['plain says hi']);
    expect(byId['approve']).toMatchObject({ state: 'waiting', reason: 'waiting for an operator at gate: Ship the result?' });
    expect(byId['ship'].state).toBe('pending');

    const answered = await h.runs.answerGate(started.id, 'approve', { decision: 'accept', note: 'lgtm' });
    expect(answered.state).toBe('success');
    expect(answered.envelope?.output).toEqual({ decision: 'accept', note: 'lgtm' });
    await expect(h.runs.answerGate(started.id, 'approve', { decision: 'accept' })).rejects.toMatchObject({
      code: 'gate_not_waiting',
    });

    const done = await waitForRun(h.runs, started.id);
    expect(done.state).toBe('success');
    const ship = done.stages.find((s) => s.id === 'ship');
    expect(ship?.envelope).toMatchObject({ ok: true, stage: 'ship', attempt: 1, output: { decision: 'accept', note: 'lgtm' } });

    const events = await allEvents(h.runs, started.id);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => e.type === 'run.state').map((e) => (e as RunEvent<'run.state'>).data.state)).toEqual([
      'queued',
      'running',
      'waiting',
      'running',
      'success',
    ]);
    expect(stateEvents(events, 'prep')).toEqual(['ready', 'queued', 'running', 'success']);
    expect(events.find((e) => e.type === 'gate.opened')).toMatchObject({ stageId: 'approve', data: { message: 'Ship the result?' } });
    expect(events.find((e) => e.type === 'stage.log')).toMatchObject({ stageId: 'plain', data: { stream: 'stdout', line: 'plain says hi' } });
  });

  it('fails the run when the gate is rejected and cancels what comes after it', async () => {
    const run = await h.runs.startRun({ pipeline: flow, input: {} });
    await waitForRun(h.runs, run.id, ['waiting']);
    const rejected = await h.runs.answerGate(run.id, 'approve', { decision: 'reject', note: 'not today' });
    expect(rejected).toMatchObject({ state: 'failed', reason: 'rejected by operator' });
    const done = await waitForRun(h.runs, run.id);
    expect(done).toMatchObject({ state: 'failed', reason: 'stage "approve" failed: rejected by operator' });
    expect(done.stages.find((s) => s.id === 'ship')).toMatchObject({ state: 'cancelled' });
    await expect(h.runs.cancelRun(run.id)).rejects.toMatchObject({ code: 'run_finished' });
  });

  it('never has more than max_active_stages stages running at once', async () => {
    const timed = `start=$(date +%s%3N); sleep 0.4; end=$(date +%s%3N); printf '{"start": %s, "end": %s}' "$start" "$end" > "$STAGEFLOW_OUTPUT"`;
    const ids = ['s1', 's2', 's3', 's4', 's5', 's6'];
    const run = await h.runs.startRun({ pipeline: pipelineOf(ids.map((id) => runStage(id, timed)), [], 2), input: {} });
    const done = await waitForRun(h.runs, run.id);
    expect(done.state).toBe('success');
    const spans = done.stages.map((s) => s.envelope?.output as { start: number; end: number });
    const overlapAt = (t: number) => spans.filter((s) => s.start <= t && t < s.end).length;
    const peak = Math.max(...spans.map((s) => overlapAt(s.start)));
    // Two at a time: never three, and the two slots were really used together.
    expect(peak).toBe(2);
  });

  it('fails a stage whose output misses its output schema, naming the field', async () => {
    const run = await h.runs.startRun({
      pipeline: pipelineOf(
        [
          runStage('count', `printf '{"count": "three"}' > "$STAGEFLOW_OUTPUT"`, {
            outputSchema: { type: 'object', required: ['count', 'items'], properties: { count: { type: 'integer' } } },
          }),
        ],
        [],
      ),
      input: {},
    });
    const done = await waitForRun(h.runs, run.id);
    const stage = done.stages[0];
    expect(stage.state).toBe('failed');
    expect(stage.reason).toBe('output does not match output_schema: /items is required; /count must be integer');
    expect(stage.envelope).toMatchObject({ ok: false, error: stage.reason });
    const events = await allEvents(h.runs, run.id);
    const failedEvent = events.find((e) => e.type === 'stage.state' && (e as RunEvent<'stage.state'>).data.state === 'failed');
    expect((failedEvent as RunEvent<'stage.state'>).data.reason).toContain('/count must be integer');
  });

  it('fails a stage whose output file is not JSON', async () => {
    const run = await h.runs.startRun({
      pipeline: pipelineOf([runStage('bad', `echo 'not json' > "$STAGEFLOW_OUTPUT"`)], []),
      input: {},
    });
    const done = await waitForRun(h.runs, run.id);
    expect(done.stages[0].reason).toMatch(/^output file is not valid JSON/);
  });

  it('passes the STAGEFLOW_* variables, the stage env, and runs argv commands without a shell', async () => {
    const run = await h.runs.startRun({
      pipeline: pipelineOf(
        [
          runStage('env', `printf '{"run":"%s","stage":"%s","attempt":"%s","greeting":"%s","cwd":"%s"}' "$STAGEFLOW_RUN_ID" "$STAGEFLOW_STAGE_ID" "$STAGEFLOW_ATTEMPT" "$GREETING" "$(pwd)" > "$STAGEFLOW_OUTPUT"`, {
            env: { GREETING: 'hello', STAGEFLOW_ATTEMPT: 'spoofed' },
          }),
          runStage('argv', ['node', '-e', 'require("fs").writeFileSync(process.env.STAGEFLOW_OUTPUT, JSON.stringify({args: process.argv.length}))']),
        ],
        [],
      ),
      input: {},
    });
    const done = await waitForRun(h.runs, run.id);
    expect(done.state).toBe('success');
    expect(done.stages[0].envelope?.output).toEqual({
      run: run.id,
      stage: 'env',
      attempt: '1',
      greeting: 'hello',
      cwd: `${h.config.workDir}/${run.id}/env`,
    });
    expect(done.stages[1].envelope?.output).toEqual({ args: 1 });
  });

  it('gives a run stage its attempt\'s artifacts folder and lists what it leaves there; a retry gets a fresh one', async () => {
    const run = await h.runs.startRun({
      pipeline: pipelineOf(
        [
          runStage(
            'report',
            'printf \'{"ok":true}\' > "$STAGEFLOW_ARTIFACTS_DIR/report.json"; echo hi > "$STAGEFLOW_ARTIFACTS_DIR/notes.txt"; ' +
              'printf \'{"dir":"%s","count":%s}\' "$STAGEFLOW_ARTIFACTS_DIR" "$(ls "$STAGEFLOW_ARTIFACTS_DIR" | wc -l)" > "$STAGEFLOW_OUTPUT"; ' +
              'test "$STAGEFLOW_ATTEMPT" = 2',
            { retries: 1 },
          ),
        ],
        [],
      ),
      input: {},
    });
    const done = await waitForRun(h.runs, run.id);
    expect(done.state).toBe('success');
    const envelope = done.stages[0].envelope;
    expect(envelope?.artifacts).toEqual(['notes.txt', 'report.json']);
    // Attempt 2 started in an empty folder of its own: attempt 1's files are not in it.
    expect(envelope?.output).toEqual({ dir: `${h.config.artifactsRoot}/${run.id}/report/2`, count: 2 });
  });

  it('fails a run stage that leaves something in its artifacts folder that cannot be an artifact, naming and removing it', async () => {
    const run = await h.runs.startRun({
      pipeline: pipelineOf(
        [runStage('bad', 'echo x > "$STAGEFLOW_ARTIFACTS_DIR/has space.txt"; echo y > "$STAGEFLOW_ARTIFACTS_DIR/fine.txt"')],
        [],
      ),
      input: {},
    });
    const done = await waitForRun(h.runs, run.id);
    const stage = done.stages[0];
    expect(done.state).toBe('failed');
    expect(stage.reason).toBe(
      '$STAGEFLOW_ARTIFACTS_DIR held what cannot be an artifact (removed): "has space.txt" (it is not an artifact name: it must start with a letter or digit and use only letters, digits, ".", "_" and "-")',
    );
    expect(stage.envelope?.artifacts).toEqual(['fine.txt']);
    expect(stage.logTail).toContain(
      '[stageflow] removed "has space.txt" from the artifacts folder: it is not an artifact name: it must start with a letter or digit and use only letters, digits, ".", "_" and "-"',
    );
    expect(readdirSync(join(h.config.artifactsRoot, run.id, 'bad', '1'))).toEqual(['fine.txt']);
  });
});

describe('the event stream', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  it('numbers events 1..n without gaps and resumes after any seq, live and from history', async () => {
    const tail = h.tails();
    try {
      const run = await h.runs.startRun({
        pipeline: pipelineOf([runStage('a', 'echo one; echo two'), runStage('b', 'echo three')], [{ from: 'a', to: 'b' }]),
        input: {},
      });
      await waitForRun(h.runs, run.id);
      const events = await allEvents(h.runs, run.id);
      expect(events.length).toBeGreaterThan(10);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));

      const resumed = await h.runs.readEvents(run.id, 5, 3);
      expect(resumed.map((e) => e.seq)).toEqual([6, 7, 8]);
      expect(resumed).toEqual(events.slice(5, 8));

      const live = await tail.tailRun(run.id, events.length - 2, 100);
      expect(live.map((e) => e.seq)).toEqual([events.length - 1, events.length]);
      expect(await tail.tailRun(run.id, events.length, 50)).toEqual([]);

      const everything = await tail.tailAll('0', 100);
      expect(everything.filter((c) => c.event.runId === run.id).map((c) => c.event.seq)).toEqual(events.map((e) => e.seq));
      const fromCursor = await tail.tailAll(everything[2].cursor, 100);
      expect(fromCursor[0].event).toEqual(everything[3].event);
    } finally {
      await tail.close();
    }
  });

  it('tails only new events when no cursor is given, and misses none between calls', async () => {
    const tail = h.tails();
    try {
      const first = await h.runs.startRun({ pipeline: pipelineOf([runStage('a', 'true')], []), input: {} });
      await waitForRun(h.runs, first.id);
      expect(await tail.tailAll(undefined, 50)).toEqual([]);
      const second = await h.runs.startRun({ pipeline: pipelineOf([runStage('a', 'true')], []), input: {} });
      await waitForRun(h.runs, second.id);
      const seen = await waitFor('events of the second run', async () => {
        const got = await tail.tailAll(undefined, 100);
        return got.length ? got : undefined;
      });
      expect(new Set(seen.map((c) => c.event.runId))).toEqual(new Set([second.id]));
      expect(seen[0].event.seq).toBe(1);
    } finally {
      await tail.close();
    }
  });
});
