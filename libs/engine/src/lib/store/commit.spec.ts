import { RedisKeys } from '@stageflow/contracts';
import { Commit, parseCommitReply } from './commit';

describe('Commit', () => {
  const keys = new RedisKeys('t:');

  function payload(commit: Commit) {
    const [count, ...rest] = commit.toArgs();
    return { keys: rest.slice(0, count), body: JSON.parse(rest[count]) };
  }

  it('coalesces required changes to one hash: first checks, later fields win, undefined deletes', () => {
    const commit = new Commit(keys, 'r1', '2026-01-01T00:00:00.000Z', 100);
    const key = keys.stage('r1', 's');
    commit.hash(key, { expect: [{ field: 'state', in: ['pending'] }], set: { state: 'ready', input: '{}' } });
    commit.hash(key, { expect: [{ field: 'state', in: ['ready'] }], set: { state: 'queued', input: undefined } });
    const { keys: used, body } = payload(commit);
    expect(used).toEqual([keys.runEventSeq('r1'), keys.runEvents('r1'), keys.allEvents(), key]);
    expect(body.ops).toEqual([{ t: 'h', k: 4, c: [['state', 'in', 'pending']], s: ['state', 'queued'], d: ['input'] }]);
  });

  it('keeps soft changes separate and ties events to them', () => {
    const commit = new Commit(keys, 'r1', '2026-01-01T00:00:00.000Z', 100);
    const op = commit.hash(keys.stage('r1', 'a'), { soft: true, expect: [{ field: 'state', nin: ['success'] }], set: { state: 'cancelled' } });
    commit.event('stage.state', { state: 'cancelled', attempt: 1 }, 'a', op);
    const { body } = payload(commit);
    expect(body.ev).toHaveLength(1);
    expect(body.ev[0].op).toBe(1);
    // The script prepends `{"seq":N,` to the event body.
    expect(JSON.parse(`{"seq":7,${body.ev[0].j}`)).toEqual({
      seq: 7,
      runId: 'r1',
      stageId: 'a',
      type: 'stage.state',
      at: '2026-01-01T00:00:00.000Z',
      data: { state: 'cancelled', attempt: 1 },
    });
  });

  it('reads the script replies', () => {
    expect(parseCommitReply([1, 12, [1, 0]])).toEqual({ status: 'applied', lastSeq: 12, soft: [true, false] });
    expect(parseCommitReply([0, 3])).toEqual({ status: 'conflict', op: 3 });
    expect(parseCommitReply([2])).toEqual({ status: 'replayed' });
  });
});
