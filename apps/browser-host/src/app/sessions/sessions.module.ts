import { Module } from '@nestjs/common';
import { AgentBrowserSessions, FsAgentBrowserSessions } from './agent-browser-sessions.adapter';
import { LoginCheckController } from './login-check.controller';
import { LoginChecks } from './login-check';
import { SessionRegistry } from './session-registry.repository';
import { SessionsController } from './sessions.controller';
import { EngineStageActivity, StageActivity } from './stage-activity.adapter';
import { StageSessions } from './stage-sessions.service';

/** The runner-facing sessions API: a tab per stage attempt and its agent-browser environment. Needs the global BrowsersModule. */
@Module({
  controllers: [SessionsController, LoginCheckController],
  providers: [
    SessionRegistry,
    StageSessions,
    LoginChecks,
    { provide: AgentBrowserSessions, useClass: FsAgentBrowserSessions },
    { provide: StageActivity, useClass: EngineStageActivity },
  ],
  exports: [SessionRegistry, StageSessions, AgentBrowserSessions, LoginChecks],
})
export class SessionsModule {}
