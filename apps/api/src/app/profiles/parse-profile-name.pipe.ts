import { Injectable, PipeTransform } from '@nestjs/common';
import { assertProfileName } from '@stageflow/profiles';

/**
 * Checks a profile name in the path with the profiles lib's own rule, so a bad
 * name is the lib's 400 `profile_name_invalid` (quoting the pattern) before
 * anything touches the disk or Redis.
 */
@Injectable()
export class ParseProfileNamePipe implements PipeTransform<unknown, string> {
  transform(value: unknown): string {
    assertProfileName(value);
    return value;
  }
}
