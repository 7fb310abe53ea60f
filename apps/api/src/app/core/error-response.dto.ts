import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** The body of every error response: a stable `code` clients match on, and a message saying what to do. */
export class ErrorResponseDto {
  @ApiProperty({ example: 'run_not_found', description: 'Stable error code (see docs/api.md).' })
  code!: string;

  @ApiProperty({ example: 'No run "r1": list runs with GET /api/runs.' })
  message!: string;

  @ApiPropertyOptional({
    description: 'Structured context: for `invalid_request` a list of `{field, problem}`, for `pipeline_invalid` the diagnostics.',
  })
  details?: unknown;
}

/** One problem with a request field, as listed in an `invalid_request` error's details. */
export interface FieldProblem {
  field: string;
  problem: string;
}
