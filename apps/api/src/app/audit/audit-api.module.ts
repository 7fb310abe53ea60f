import { DynamicModule, Module } from '@nestjs/common';
import { AuditLog } from '@stageflow/audit';
import type { ApiConfig } from '@stageflow/config';
import { AuditController } from './audit.controller';
import { AuditApiService } from './audit-api.service';

const systemClock = { now: (): Date => new Date() };

/** `/api/audit`: reads `$STAGEFLOW_HOME/browser/audit.jsonl` (the profiles lib and the Host append to it). */
@Module({})
export class AuditApiModule {
  static forRoot(config: ApiConfig): DynamicModule {
    return {
      module: AuditApiModule,
      controllers: [AuditController],
      providers: [{ provide: AuditLog, useFactory: () => new AuditLog(config.home, systemClock) }, AuditApiService],
    };
  }
}
