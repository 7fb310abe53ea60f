import { DynamicModule, Module } from '@nestjs/common';
import { EventsGateway } from './events.gateway';
import { DEFAULT_EVENTS_OPTIONS, EVENTS_OPTIONS, type EventsOptions } from './events.options';
import { EventsService } from './events.service';

@Module({})
export class EventsModule {
  static forRoot(options: Partial<EventsOptions> = {}): DynamicModule {
    return {
      module: EventsModule,
      providers: [{ provide: EVENTS_OPTIONS, useValue: { ...DEFAULT_EVENTS_OPTIONS, ...options } }, EventsService, EventsGateway],
      exports: [EventsService],
    };
  }
}
