import { Inject, Injectable } from '@nestjs/common';
import { PROFILE_SCOPE, ProfileService } from '@stageflow/profiles';
import { LeasedProfileResponseDto, ProfileResponseDto, type CreateProfileDto } from './profile.dto';

/** The profile routes over the profiles lib, in the Host's scope (never the client's choice). */
@Injectable()
export class ProfilesApiService {
  constructor(
    private readonly profiles: ProfileService,
    @Inject(PROFILE_SCOPE) private readonly scope: string,
  ) {}

  async create(dto: CreateProfileDto): Promise<ProfileResponseDto> {
    return ProfileResponseDto.from(await this.profiles.create(this.scope, dto.name));
  }

  async list(): Promise<LeasedProfileResponseDto[]> {
    return (await this.profiles.list(this.scope)).map((p) => LeasedProfileResponseDto.from(p));
  }

  async get(name: string): Promise<LeasedProfileResponseDto> {
    return LeasedProfileResponseDto.from(await this.profiles.get(this.scope, name));
  }

  async delete(name: string): Promise<void> {
    await this.profiles.delete(this.scope, name);
  }
}
