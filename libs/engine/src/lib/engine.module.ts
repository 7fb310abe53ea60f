import { DynamicModule, Module } from '@nestjs/common';
import { RedisKeys } from '@stageflow/contracts';
import { Clock } from './clock.adapter';
import { EVENT_TAIL_FACTORY, EventTailFactory, PIPELINES_API, RUNS_API } from './engine.api';
import { EngineOptions, EngineRedisConfig, resolveEngineOptions } from './engine.options';
import { ENGINE_OPTIONS, ENGINE_REDIS_CONFIG } from './engine.tokens';
import { EventTail } from './events/event-tail';
import { PipelinesService } from './pipelines/pipelines.service';
import { StageQueue } from './queue/stage-queue.adapter';
import { AbandonSweeper } from './runs/abandon-sweeper.service';
import { CancelBus } from './runs/cancel.bus';
import { RunAdvancer } from './runs/run-advancer.service';
import { RunsService } from './runs/runs.service';
import { StageAttempts } from './runs/stage-attempts.service';
import { SchemaCheck } from './schema/schema.check';
import { EngineRedis } from './store/redis.adapter';
import { RunStore } from './store/run.store';

/**
 * The run engine as a Nest module.
 *
 * ```ts
 * EngineModule.forRoot(config.redis)            // api: RUNS_API, PIPELINES_API, EVENT_TAIL_FACTORY
 * EngineModule.forRoot(config.redis, { ... })   // runner: also StageAttempts, AbandonSweeper, CancelBus
 * ```
 * Global, so feature modules inject the tokens without importing it again.
 */
@Module({})
export class EngineModule {
  static forRoot(redis: EngineRedisConfig, options: EngineOptions = {}): DynamicModule {
    return {
      module: EngineModule,
      global: true,
      providers: [
        { provide: ENGINE_REDIS_CONFIG, useValue: redis },
        { provide: ENGINE_OPTIONS, useValue: resolveEngineOptions(options) },
        { provide: RedisKeys, useValue: new RedisKeys(redis.prefix) },
        { provide: SchemaCheck, useValue: new SchemaCheck() },
        Clock,
        EngineRedis,
        RunStore,
        StageQueue,
        CancelBus,
        RunAdvancer,
        RunsService,
        PipelinesService,
        StageAttempts,
        AbandonSweeper,
        { provide: RUNS_API, useExisting: RunsService },
        { provide: PIPELINES_API, useExisting: PipelinesService },
        {
          provide: EVENT_TAIL_FACTORY,
          useFactory: (conns: EngineRedis, keys: RedisKeys): EventTailFactory => () =>
            new EventTail(conns.dedicated('event-tail'), keys),
          inject: [EngineRedis, RedisKeys],
        },
      ],
      exports: [
        RUNS_API,
        PIPELINES_API,
        EVENT_TAIL_FACTORY,
        RedisKeys,
        SchemaCheck,
        Clock,
        EngineRedis,
        StageQueue,
        CancelBus,
        StageAttempts,
        AbandonSweeper,
      ],
    };
  }
}
