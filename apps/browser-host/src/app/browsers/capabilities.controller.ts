import { Controller, Get, Inject } from '@nestjs/common';
import type { HostCapabilities } from '@stageflow/browser-hosts';
import { BrowserProcesses } from './browser-processes.adapter';
import { BROWSER_SETTINGS, type BrowserSettings } from './browser-host.tokens';

/** What the login stage may offer an operator on this Host (spec: "What each Host shows"). */
@Controller('internal/capabilities')
export class CapabilitiesController {
  constructor(
    private readonly processes: BrowserProcesses,
    @Inject(BROWSER_SETTINGS) private readonly settings: BrowserSettings,
  ) {}

  @Get()
  capabilities(): HostCapabilities {
    const { screen, headedMode } = this.processes.capabilities();
    // The adapter can stream any of its browsers, but only a Host whose console serves
    // the live view (STAGEFLOW_LIVE_VIEW) may offer it: else the operator is stranded.
    return { screen, liveView: this.settings.liveView, headedMode };
  }
}
