import { Module } from '@nestjs/common';
import { AgentBrowserSessions, FsAgentBrowserSessions } from './agent-browser-sessions.adapter';
import { LoginCheckController } from './login-check.controller';
import { LoginChecks } from './login-check';
import { ProfileBrowserDataController } from './profile-browser-data.controller';
import { ProfileBrowserData } from './profile-browser-data.service';
import { ProfileCheckController } from './profile-check.controller';
import { ProfileChecks } from './profile-check.service';
import { AllowlistAuditRepository } from './allowlist-audits.repository';
import { ALLOWLIST_AUDIT_TIMING, AllowlistAudits, DEFAULT_ALLOWLIST_AUDIT_TIMING } from './allowlist-audits.service';
import { SessionRegistry } from './session-registry.repository';
import { SessionsController } from './sessions.controller';
import { EngineStageActivity, StageActivity } from './stage-activity.adapter';
import { StageSessions } from './stage-sessions.service';

/**
 * The runner-facing sessions API: a tab per stage attempt and its agent-browser environment, and the
 * soft allowlist audit of profile stages. Needs the global BrowsersModule.
 */
@Module({
  controllers: [SessionsController, LoginCheckController, ProfileCheckController, ProfileBrowserDataController],
  providers: [
    SessionRegistry,
    StageSessions,
    LoginChecks,
    ProfileChecks,
    ProfileBrowserData,
    AllowlistAuditRepository,
    AllowlistAudits,
    { provide: ALLOWLIST_AUDIT_TIMING, useValue: DEFAULT_ALLOWLIST_AUDIT_TIMING },
    { provide: AgentBrowserSessions, useClass: FsAgentBrowserSessions },
    { provide: StageActivity, useClass: EngineStageActivity },
  ],
  exports: [SessionRegistry, StageSessions, AgentBrowserSessions, AllowlistAudits, LoginChecks],
})
export class SessionsModule {}
