/**
 * examples/hello/pipeline.yaml on the composed stack, driven the way the
 * example's README tells a user to: start it over REST, follow it over the
 * WebSocket, answer the gate.
 */
import type { RunEvent } from '@stageflow/contracts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './support/compose-stack';
import {
  api,
  isRunEnd,
  oneTo,
  RunEventSocket,
  runHistory,
  RunView,
  seqs,
  StageView,
  stageReached,
} from './support/stageflow-client';

const HELLO_YAML = readFileSync(join(REPO_ROOT, 'examples/hello/pipeline.yaml'), 'utf8');

async function startHello(): Promise<RunView> {
  const res = await api<RunView>('POST', '/api/runs', { yaml: HELLO_YAML });
  expect(res).toMatchObject({ status: 201 });
  expect(res.body.stages.map((s) => s.id).sort()).toEqual(['approve', 'greet', 'left', 'right', 'ship']);
  return res.body;
}

async function getRun(runId: string): Promise<RunView> {
  const res = await api<RunView>('GET', `/api/runs/${runId}`);
  expect(res.status).toBe(200);
  return res.body;
}

function stage(run: RunView, id: string): StageView {
  const found = run.stages.find((s) => s.id === id);
  if (!found) throw new Error(`run ${run.id} has no stage ${id}: ${JSON.stringify(run.stages.map((s) => s.id))}`);
  return found;
}

function states(run: RunView): Record<string, string> {
  return Object.fromEntries(run.stages.map((s) => [s.id, s.state]));
}

function answerGate(runId: string, decision: 'accept' | 'reject', note?: string) {
  return api<StageView>('POST', `/api/runs/${runId}/stages/approve/gate`, note ? { decision, note } : { decision });
}

/** The REST history holds what the socket delivered, in the same order, and nothing out of sequence. */
async function expectHistoryMatches(runId: string, delivered: RunEvent[]): Promise<void> {
  const history = await runHistory(runId);
  expect(seqs(history)).toEqual(oneTo(history.length));
  expect(history.slice(0, delivered.length)).toEqual(delivered);
}

describe('the hello example on the composed stack', () => {
  const sockets: RunEventSocket[] = [];
  afterEach(async () => {
    await Promise.all(sockets.splice(0).map((s) => s.close()));
  });

  it('runs to success once the gate is accepted, with events 1..n over the WebSocket', async () => {
    const run = await startHello();
    const ws = await RunEventSocket.open(run.id, 0);
    sockets.push(ws);

    await ws.waitFor(stageReached('approve', 'waiting'), 'approve gate waiting');
    const waiting = await getRun(run.id);
    expect(stage(waiting, 'approve').state).toBe('waiting');
    expect(stage(waiting, 'approve').gate?.message).toBe('Ship the greeting?');
    expect(stage(waiting, 'ship').state).toBe('pending');
    expect(stage(waiting, 'greet').envelope?.output).toEqual({ greeting: 'hello', ship: true });

    const answer = await answerGate(run.id, 'accept');
    expect(answer.status).toBe(200);

    const end = await ws.waitFor(isRunEnd, 'end of the run');
    expect(end.data).toMatchObject({ state: 'success' });
    const done = await getRun(run.id);
    expect(done.state).toBe('success');
    expect(states(done)).toEqual({ greet: 'success', left: 'success', right: 'success', approve: 'success', ship: 'success' });
    // `right` ran because greet's output said ship; `ship` ran its command after the gate.
    expect((await api<{ logTail: string[] }>('GET', `/api/runs/${run.id}/stages/ship`)).body.logTail.join('\n')).toContain('shipped');
    // `left` printed its input, which is greet's output.
    expect((await api<{ logTail: string[] }>('GET', `/api/runs/${run.id}/stages/left`)).body.logTail.join('\n')).toContain('hello');

    expect(seqs(ws.events)).toEqual(oneTo(ws.events.length));
    expect(ws.events.every((e) => e.runId === run.id)).toBe(true);
    await expectHistoryMatches(run.id, ws.events);
  });

  it('fails the run and the gate stage when the gate is rejected, and never runs what follows', async () => {
    const run = await startHello();
    const ws = await RunEventSocket.open(run.id, 0);
    sockets.push(ws);

    await ws.waitFor(stageReached('approve', 'waiting'), 'approve gate waiting');
    expect((await answerGate(run.id, 'reject', 'not today')).status).toBe(200);

    const end = await ws.waitFor(isRunEnd, 'end of the run');
    expect(end.data).toMatchObject({ state: 'failed' });
    const done = await getRun(run.id);
    expect(done.state).toBe('failed');
    expect(stage(done, 'approve').state).toBe('failed');
    expect(stage(done, 'approve').gate?.answer).toMatchObject({ decision: 'reject' });
    expect(stage(done, 'ship').state).not.toBe('success');
    expect(ws.events.some(stageReached('ship', 'running'))).toBe(false);

    // Answering again is refused with a code the client can act on.
    const again = await answerGate(run.id, 'accept');
    expect(again.status).toBe(409);

    expect(seqs(ws.events)).toEqual(oneTo(ws.events.length));
    await expectHistoryMatches(run.id, ws.events);
  });

  it('resumes after a reconnect from the last seq seen, with no gap and no duplicate', async () => {
    const run = await startHello();
    const first = await RunEventSocket.open(run.id, 0);
    sockets.push(first);
    await first.waitFor(stageReached('approve', 'waiting'), 'approve gate waiting');
    await first.close();
    const before = [...first.events];
    const lastSeq = before[before.length - 1].seq;

    // The rest of the run happens while no one is connected.
    expect((await answerGate(run.id, 'accept')).status).toBe(200);

    const second = await RunEventSocket.open(run.id, lastSeq);
    sockets.push(second);
    await second.waitFor(isRunEnd, 'end of the run after reconnecting');

    expect(second.events[0].seq).toBe(lastSeq + 1);
    const all = [...before, ...second.events];
    expect(seqs(all)).toEqual(oneTo(all.length));
    expect(all.filter(isRunEnd)).toHaveLength(1);
    await expectHistoryMatches(run.id, all);
  });
});
