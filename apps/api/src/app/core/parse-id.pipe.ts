import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { StageflowError } from '@stageflow/contracts';

/** Run, stage and pipeline ids: one safe path segment (the same rule the contracts lib applies to job payloads). */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * Checks an id in the path. A malformed id is a 400 `invalid_id` (the client
 * sent something that can never name anything); a well-formed id that names
 * nothing is a 404 from the engine.
 */
@Injectable()
export class ParseIdPipe implements PipeTransform<unknown, string> {
  transform(value: unknown, metadata: ArgumentMetadata): string {
    if (typeof value === 'string' && ID_PATTERN.test(value)) return value;
    const field = metadata.data ?? 'id';
    throw new StageflowError(
      'invalid_id',
      `The ${field} id in the path is malformed: ids are 1 to 128 letters, digits, "_" or "-".`,
      400,
      [{ field, problem: 'must match ^[A-Za-z0-9_-]{1,128}$' }],
    );
  }
}
