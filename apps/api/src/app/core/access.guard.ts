import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AccessPolicy } from './access.policy';
import { IS_PUBLIC } from './public.decorator';
import type { HttpRequest } from './http-request';

/** Applies the {@link AccessPolicy} to every REST route except those marked `@Public()`. */
@Injectable()
export class AccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(AccessPolicy) private readonly policy: AccessPolicy,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    // The WebSocket is checked once, at the upgrade (see ApiWsAdapter).
    if (context.getType() !== 'http') return true;
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()])) return true;
    const denied = this.policy.check(context.switchToHttp().getRequest<HttpRequest>().headers);
    if (denied) throw denied;
    return true;
  }
}
