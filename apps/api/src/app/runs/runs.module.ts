import { Module } from '@nestjs/common';
import { PipelinesModule } from '../pipelines/pipelines.module';
import { RunsController } from './runs.controller';
import { RunsService } from './runs.service';

@Module({
  imports: [PipelinesModule],
  controllers: [RunsController],
  providers: [RunsService],
})
export class RunsModule {}
