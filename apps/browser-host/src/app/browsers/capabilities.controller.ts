import { Controller, Get } from '@nestjs/common';
import type { HostCapabilities } from '@stageflow/browser-hosts';
import { BrowserProcesses } from './browser-processes.adapter';

/** What the login stage may offer an operator on this Host (spec: "What each Host shows"). */
@Controller('internal/capabilities')
export class CapabilitiesController {
  constructor(private readonly processes: BrowserProcesses) {}

  @Get()
  capabilities(): HostCapabilities {
    const { screen, headedMode } = this.processes.capabilities();
    // The adapter could stream any local browser, but no live-view relay is wired to
    // browser-host yet: offering a live view nobody serves would strand the operator.
    return { screen, liveView: false, headedMode };
  }
}
