import { Module } from '@nestjs/common';
import { SessionsModule } from '../sessions/sessions.module';
import { BrowserHostLifecycle } from './browser-host-lifecycle.service';
import { RunEndWatcher } from './run-end-watcher.service';
import { RunTeardown } from './run-teardown.service';
import { StartupSweep } from './startup-sweep.service';

/** Teardown at stage and run ends, the startup sweep, and browser-host's boot and shutdown order. */
@Module({
  imports: [SessionsModule],
  providers: [RunTeardown, RunEndWatcher, StartupSweep, BrowserHostLifecycle],
  exports: [BrowserHostLifecycle, RunTeardown],
})
export class SweepModule {}
