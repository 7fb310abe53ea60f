import { Inject, Injectable } from '@nestjs/common';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { StageJobPayload } from '@stageflow/contracts';
import { RUNNER_CONFIG } from '../runner.tokens';
import type { RunnerConfig } from '@stageflow/config';

export interface AttemptPaths {
  /** Where the stage's process starts. */
  cwd: string;
  /** The stage's `.stageflow/` folder (0700), for the runner's files of an attempt. */
  own: string;
  /** `STAGEFLOW_INPUT`: the stage's input as JSON. */
  input: string;
  /** `STAGEFLOW_OUTPUT`: where the stage writes its output JSON. */
  output: string;
}

/**
 * Stage folders on disk: `<workDir>/<runId>/<stageId>/` is the stage's working
 * dir (or `cwd` relative to it); the engine's files for an attempt sit in its
 * `.stageflow/` subfolder, one pair per attempt so a retry never reads the
 * previous attempt's output.
 *
 * Synchronous on purpose: these are a few small local-disk calls on every
 * stage's hot path, and each async fs call costs a thread-pool round trip
 * (measured ~1 ms per stage under load) for microseconds of blocking saved.
 */
@Injectable()
export class StageWorkspace {
  constructor(@Inject(RUNNER_CONFIG) private readonly config: RunnerConfig) {}

  prepare(job: StageJobPayload, cwd: string | undefined): AttemptPaths {
    const stageDir = join(this.config.workDir, job.runId, job.stageId);
    const own = join(stageDir, '.stageflow');
    const workDir = cwd === undefined ? stageDir : isAbsolute(cwd) ? cwd : resolve(stageDir, cwd);
    mkdirSync(own, { recursive: true, mode: 0o700 });
    if (workDir !== stageDir) mkdirSync(workDir, { recursive: true });
    return {
      cwd: workDir,
      own,
      input: join(own, `input-${job.attempt}.json`),
      output: join(own, `output-${job.attempt}.json`),
    };
  }

  writeInput(path: string, input: unknown): void {
    writeFileSync(path, JSON.stringify(input ?? null), { mode: 0o600 });
  }

  /** The output file's text, or undefined when the stage wrote none. */
  readOutput(path: string): string | undefined {
    try {
      return readFileSync(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }
}
