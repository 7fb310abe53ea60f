import { Module } from '@nestjs/common';
import { AgentBrowserSessions, FsAgentBrowserSessions } from './agent-browser-sessions.adapter';
import { SessionRegistry } from './session-registry.repository';
import { SessionsController } from './sessions.controller';
import { EngineStageActivity, StageActivity } from './stage-activity.adapter';
import { StageSessions } from './stage-sessions.service';

/** The runner-facing sessions API: a tab per stage attempt and its agent-browser environment. Needs the global BrowsersModule. */
@Module({
  controllers: [SessionsController],
  providers: [
    SessionRegistry,
    StageSessions,
    { provide: AgentBrowserSessions, useClass: FsAgentBrowserSessions },
    { provide: StageActivity, useClass: EngineStageActivity },
  ],
  exports: [SessionRegistry, StageSessions, AgentBrowserSessions],
})
export class SessionsModule {}
