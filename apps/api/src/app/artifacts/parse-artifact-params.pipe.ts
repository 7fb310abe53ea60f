import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { assertArtifactName } from '@stageflow/artifacts';
import { StageflowError } from '@stageflow/contracts';

/** Highest attempt number the path accepts (attempts are retries + 1, at most 11 today). */
const MAX_ATTEMPT = 999_999_999;

/**
 * An attempt number in the path: a positive whole number. A malformed one is
 * a 400 `invalid_attempt`; one that names no attempt is a 404 from the store.
 * (The global ValidationPipe has already turned the text into a number, as
 * the parameter is typed `number`.)
 */
@Injectable()
export class ParseAttemptPipe implements PipeTransform<unknown, number> {
  transform(value: unknown): number {
    const n = typeof value === 'string' && /^[0-9]{1,9}$/.test(value) ? Number(value) : value;
    if (typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= MAX_ATTEMPT) return n;
    throw new StageflowError(
      'invalid_attempt',
      'The attempt in the path is malformed: it is the stage\'s attempt number, 1 for the first, written in digits (e.g. 2).',
      400,
      [{ field: 'attempt', problem: 'must be a whole number from 1' }],
    );
  }
}

/**
 * An artifact name in the path, checked with the artifacts lib's own rule
 * before anything touches the disk: a 400 `artifact_name_invalid` that
 * quotes the pattern. Express has already decoded `%2F`, so `..%2Fx` arrives
 * as `../x` and is refused here.
 */
@Injectable()
export class ParseArtifactNamePipe implements PipeTransform<unknown, string> {
  transform(value: unknown, _metadata: ArgumentMetadata): string {
    assertArtifactName(value);
    return value;
  }
}
