import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { isCheckHolder } from '@stageflow/leases';
import { PROFILE_NAME_RULE, type LeasedProfile, type ProfileInfo, type ProfileLease } from '@stageflow/profiles';
import { Type } from 'class-transformer';
import { IsObject, IsOptional, IsString, ValidateNested } from 'class-validator';
import { BrowserCheckDto, ProfileCheckResultDto } from './profile-check.dto';

/** Body of `POST /api/profiles`. The name rule itself is the profiles lib's (`profile_name_invalid`), not a validator's. */
export class CreateProfileDto {
  @ApiProperty({
    description: 'The profile name: one folder name, as pipelines name it in `browser.profile`. Never a path.',
    example: 'work',
    pattern: PROFILE_NAME_RULE,
  })
  @IsString()
  name!: string;

  @ApiPropertyOptional({
    type: BrowserCheckDto,
    description: 'The default login check of the profile ("Check now"): the same fields as a pipeline\'s `browser.check`.',
  })
  @IsOptional()
  @IsObject({ message: 'must be an object like {"url": "https://…", "logged_out_url": "*/login*"}' })
  @ValidateNested()
  @Type(() => BrowserCheckDto)
  check?: BrowserCheckDto;
}

export class ProfileLeaseHolderDto {
  @ApiProperty({ description: 'The run that holds the profile until it ends.', example: 'run-8f2c' })
  runId!: string;
  @ApiProperty({ format: 'date-time', description: 'When the run was granted the profile.' })
  since!: string;
  @ApiPropertyOptional({ description: 'True while a "Check now" holds the profile (then `runId` is the check\'s id, not a run).' })
  check?: true;
}

export class ProfileLeaseWaiterDto {
  @ApiProperty({ description: 'A run waiting for the profile.', example: 'run-9a01' })
  runId!: string;
  @ApiProperty({ format: 'date-time', description: 'When it started waiting.' })
  since!: string;
}

export class ProfileLeaseDto {
  @ApiPropertyOptional({ type: ProfileLeaseHolderDto, description: 'Absent when no run holds the profile.' })
  holder?: ProfileLeaseHolderDto;
  @ApiProperty({ type: [ProfileLeaseWaiterDto], description: 'Runs waiting for the profile, first in line first.' })
  waiters!: ProfileLeaseWaiterDto[];

  static from(lease: ProfileLease): ProfileLeaseDto {
    const waiters = lease.waiters.map((w) => ({ runId: w.runId, since: w.since }));
    if (!lease.holder) return { waiters };
    const { runId, since } = lease.holder;
    return { holder: isCheckHolder(runId) ? { runId, since, check: true } : { runId, since }, waiters };
  }
}

/** A profile as clients see it: a name, never a path. */
export class ProfileResponseDto {
  @ApiProperty({ example: 'work', pattern: PROFILE_NAME_RULE })
  name!: string;
  @ApiProperty({ example: 'local', description: 'The owner scope, set by the Host.' })
  scope!: string;
  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
  @ApiPropertyOptional({ type: BrowserCheckDto, description: 'The default login check, when one is set.' })
  check?: BrowserCheckDto;

  static from(p: ProfileInfo): ProfileResponseDto {
    return { name: p.name, scope: p.scope, createdAt: p.createdAt };
  }
}

export class LeasedProfileResponseDto extends ProfileResponseDto {
  @ApiPropertyOptional({ description: 'Bytes of the files in the profile. Only when reading one profile.' })
  sizeBytes?: number;
  @ApiProperty({ type: ProfileLeaseDto, description: 'Which run holds the profile and which runs wait for it.' })
  lease!: ProfileLeaseDto;
  @ApiPropertyOptional({ type: ProfileCheckResultDto, description: 'The last "Check now" result; absent until the profile was checked.' })
  lastCheck?: ProfileCheckResultDto;

  static override from(p: LeasedProfile): LeasedProfileResponseDto {
    const base = ProfileResponseDto.from(p);
    const lease = ProfileLeaseDto.from(p.lease);
    return p.sizeBytes === undefined ? { ...base, lease } : { ...base, sizeBytes: p.sizeBytes, lease };
  }
}
