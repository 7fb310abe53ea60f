import { ApiProperty } from '@nestjs/swagger';
import type { ArtifactInfo } from '@stageflow/artifacts';
import { ARTIFACT_NAME_PATTERN } from '@stageflow/contracts';

/** One artifact as clients see it: names, numbers and the api path to download it; never a file path. */
export class ArtifactResponseDto {
  @ApiProperty({ description: 'The stage that produced it.', example: 'login' })
  stage!: string;
  @ApiProperty({ description: 'The attempt of that stage (1 = first).', example: 1 })
  attempt!: number;
  @ApiProperty({ description: 'The artifact name: one file name.', example: 'account.png', pattern: ARTIFACT_NAME_PATTERN })
  name!: string;
  @ApiProperty({ description: 'Size in bytes.', example: 48213 })
  sizeBytes!: number;
  @ApiProperty({ description: 'The content type it is downloaded with (from its extension).', example: 'image/png' })
  contentType!: string;
  @ApiProperty({ format: 'date-time', description: 'When it was written.' })
  modifiedAt!: string;
  @ApiProperty({
    description: 'Where to download it (this api, same token).',
    example: '/api/runs/mx2gq6cy-dffc8d6ff6/artifacts/login/1/account.png',
  })
  downloadPath!: string;

  static from(a: ArtifactInfo, prefix: string): ArtifactResponseDto {
    return {
      stage: a.stageId,
      attempt: a.attempt,
      name: a.name,
      sizeBytes: a.sizeBytes,
      contentType: a.contentType,
      modifiedAt: a.modifiedAt,
      // Every segment is an id, a number or an artifact name, which need no escaping; encoded all the same.
      downloadPath: `/${prefix}/runs/${a.runId}/artifacts/${[a.stageId, String(a.attempt), a.name].map(encodeURIComponent).join('/')}`,
    };
  }
}

export class ArtifactListResponseDto {
  @ApiProperty({ type: [ArtifactResponseDto], description: 'By stage, attempt and name.' })
  items!: ArtifactResponseDto[];
}
