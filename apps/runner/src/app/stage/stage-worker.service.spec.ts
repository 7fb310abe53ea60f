import type { Job } from 'bullmq';
import type { RunnerConfig } from '@stageflow/config';
import { RedisKeys, StageJobPayload } from '@stageflow/contracts';
import type { CancelBus, Claim, EngineRedis, StageAttempts } from '@stageflow/engine';
import { resolveRunnerOptions } from '../runner.options';
import type { LoginGateExecutor } from './login/login-gate.executor';
import type { StageExecutor } from './stage-executor.service';
import type { StageLease } from './stage-lease.service';
import type { StageProcessAdapter } from './stage-process.adapter';
import { StageWorker } from './stage-worker.service';

function setup(claim: Claim, host = 'runner-a', admission: Awaited<ReturnType<StageLease['admit']>> = { outcome: 'go' }) {
  const lease = { admit: jest.fn(async () => admission) };
  const attempts = {
    claim: jest.fn(async () => claim),
    recordLost: jest.fn(async () => 'recorded' as const),
    finish: jest.fn(async () => 'recorded' as const),
  };
  const executor = { execute: jest.fn(async () => ({ state: 'success' as const })) };
  const loginGates = { run: jest.fn(async () => undefined) };
  const processes = { host, killLeftover: jest.fn(() => true) };
  const worker = new StageWorker(
    attempts as unknown as StageAttempts,
    executor as unknown as StageExecutor,
    loginGates as unknown as LoginGateExecutor,
    processes as unknown as StageProcessAdapter,
    {} as CancelBus,
    lease as unknown as StageLease,
    {} as EngineRedis,
    new RedisKeys('t:'),
    {} as RunnerConfig,
    resolveRunnerOptions(),
  );
  return { worker, attempts, executor, processes, lease, loginGates };
}

const job = (data: unknown) => ({ id: 'j1', data }) as Job<StageJobPayload>;
const payload = { runId: 'r1', stageId: 'build', attempt: 2 };

describe('StageWorker.process', () => {
  it('drops a malformed payload before touching the engine', async () => {
    const { worker, attempts } = setup({ outcome: 'drop', reason: 'x' });
    await worker.process(job({ runId: 'r1', stageId: 'build', attempt: 0, extra: true }));
    await worker.process(job('r1.build.1'));
    expect(attempts.claim).not.toHaveBeenCalled();
  });

  it('neither claims nor runs a stage parked for its browser-profile lease', async () => {
    const reason = 'waiting for browser profile p held by run r0';
    const { worker, attempts, executor } = setup({ outcome: 'drop', reason: 'x' }, 'runner-a', { outcome: 'parked', reason });
    await worker.process(job(payload));
    expect(attempts.claim).not.toHaveBeenCalled();
    expect(executor.execute).not.toHaveBeenCalled();
  });

  it('runs a claimed attempt with its run\'s lease grant and records its end', async () => {
    const claim: Claim = { outcome: 'run', stage: { id: 'build' } as never, input: {}, attempt: 2, maxAttempts: 3 };
    const grant = { scope: 'local', profile: 'p', runId: 'r1', token: 4 };
    const { worker, attempts, executor } = setup(claim, 'runner-a', { outcome: 'go', grant });
    await worker.process(job(payload));
    expect(executor.execute).toHaveBeenCalledWith(payload, claim, grant);
    expect(attempts.finish).toHaveBeenCalledWith(payload, { state: 'success' });
  });

  it('hands a human login gate to the login-gate executor, which records its own phases', async () => {
    const stage = { id: 'login', kind: 'gate', verify: 'browser_login', message: 'Sign in' } as never;
    const claim: Claim = { outcome: 'run', stage, input: {}, attempt: 1, maxAttempts: 1 };
    const grant = { scope: 'local', profile: 'p', runId: 'r1', token: 4 };
    const { worker, attempts, executor, loginGates } = setup(claim, 'runner-a', { outcome: 'go', grant });
    await worker.process(job(payload));
    expect(loginGates.run).toHaveBeenCalledWith(payload, claim, grant);
    expect(executor.execute).not.toHaveBeenCalled();
    expect(attempts.finish).not.toHaveBeenCalled();
  });

  it('records a lost attempt, then kills its process group only when it ran on this host', async () => {
    const here = setup({ outcome: 'lost', pid: 4242, pidStart: '99', host: 'runner-a' });
    await here.worker.process(job(payload));
    expect(here.attempts.recordLost).toHaveBeenCalledWith(payload, 'runner lost while running attempt 2');
    expect(here.processes.killLeftover).toHaveBeenCalledWith(4242, '99');
    expect(here.attempts.recordLost.mock.invocationCallOrder[0]).toBeLessThan(
      here.processes.killLeftover.mock.invocationCallOrder[0],
    );

    const elsewhere = setup({ outcome: 'lost', pid: 4242, pidStart: '99', host: 'runner-b' });
    await elsewhere.worker.process(job(payload));
    expect(elsewhere.attempts.recordLost).toHaveBeenCalled();
    expect(elsewhere.processes.killLeftover).not.toHaveBeenCalled();
  });

  it('does nothing for a job the engine drops (stale attempt, ended run)', async () => {
    const { worker, executor, attempts } = setup({ outcome: 'drop', reason: 'the run is cancelled' });
    await worker.process(job(payload));
    expect(executor.execute).not.toHaveBeenCalled();
    expect(attempts.finish).not.toHaveBeenCalled();
  });
});
