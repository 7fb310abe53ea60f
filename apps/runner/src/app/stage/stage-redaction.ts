import type { AttemptResult, LogLine } from '@stageflow/engine';
import type { RunStageDefinition } from '@stageflow/pipeline';
import { redactText, redactValue } from '@stageflow/redaction';

/** What leaves a stage attempt for the run's history: log lines, log tail, envelope. */
export interface StageRedaction {
  lines(lines: readonly LogLine[]): LogLine[];
  tail(tail: readonly string[]): string[];
  result(result: AttemptResult): AttemptResult;
}

const UNCHANGED: StageRedaction = {
  lines: (lines) => [...lines],
  tail: (tail) => [...tail],
  result: (result) => result,
};

const BROWSER: StageRedaction = {
  lines: (lines) => lines.map((l) => ({ stream: l.stream, line: redactText(l.line) })),
  tail: (tail) => tail.map(redactText),
  result: (result) => ({
    ...result,
    ...(result.reason !== undefined ? { reason: redactText(result.reason) } : {}),
    ...(result.logTail ? { logTail: result.logTail.map(redactText) } : {}),
    ...(result.envelope
      ? {
          envelope: {
            ...result.envelope,
            output: redactValue(result.envelope.output),
            ...(result.envelope.error !== undefined ? { error: redactText(result.envelope.error) } : {}),
          },
        }
      : {}),
  }),
};

/**
 * Browser stages see a logged-in session: cookies, tokens and storage writes
 * turn up in what they print and return, so their logs and envelope pass
 * through the redaction lib before they are stored or sent. Other stages'
 * output is the pipeline author's own and is kept as written.
 */
export function stageRedaction(stage: Pick<RunStageDefinition, 'browser'>): StageRedaction {
  return stage.browser ? BROWSER : UNCHANGED;
}
