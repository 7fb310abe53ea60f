import { DynamicModule, Module } from '@nestjs/common';
import type { ApiConfig } from '@stageflow/config';
import { LiveViewModule } from '@stageflow/live-view';
import { LiveViewController } from './live-view.controller';
import { LiveViewService } from './live-view.service';

/** Live-view tickets (`POST …/live-view/tickets`). The WebSocket itself is forwarded to the relay by LiveViewProxy. */
@Module({})
export class LiveViewApiModule {
  static forRoot(config: ApiConfig): DynamicModule {
    return {
      module: LiveViewApiModule,
      imports: [LiveViewModule.forRoot(config.redis)],
      controllers: [LiveViewController],
      providers: [LiveViewService],
    };
  }
}
