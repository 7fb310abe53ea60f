import { StageflowError } from '@stageflow/contracts';

/**
 * An `if` expression could not be parsed. `column` is 1-based and counts
 * characters inside the expression text, so a caller that knows where the
 * expression sits in a file can point at the exact character.
 */
export class ConditionSyntaxError extends StageflowError {
  constructor(
    /** What is wrong, without the position (e.g. "expected a value"). */
    readonly reason: string,
    /** 1-based column inside `expression`. */
    readonly column: number,
    readonly expression: string,
  ) {
    super('invalid_condition', `${reason} at column ${column}`, 400, {
      column,
      expression,
    });
    this.name = 'ConditionSyntaxError';
  }
}
