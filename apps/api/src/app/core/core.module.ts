import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import type { ApiConfig } from '@stageflow/config';
import { AccessGuard } from './access.guard';
import { AccessPolicy } from './access.policy';
import { ApiExceptionFilter } from './api-exception.filter';
import { RequestBodyInterceptor } from './request-body.interceptor';
import { createValidationPipe } from './request-validation.pipe';

/** What every request goes through: access check, body rules, validation, and the one error filter. */
@Module({})
export class CoreModule {
  static forRoot(config: ApiConfig): DynamicModule {
    return {
      module: CoreModule,
      global: true,
      providers: [
        { provide: AccessPolicy, useValue: new AccessPolicy(config.token) },
        { provide: APP_GUARD, useClass: AccessGuard },
        { provide: APP_INTERCEPTOR, useClass: RequestBodyInterceptor },
        { provide: APP_PIPE, useFactory: createValidationPipe },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
      ],
      exports: [AccessPolicy],
    };
  }
}
