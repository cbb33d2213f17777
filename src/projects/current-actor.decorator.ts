import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { type Actor, apiKeyActor } from '../audit/actor.js';
import type { AuthenticatedRequest } from './api-key.guard.js';

/** Who the audit log says made a change: the API key that authenticated the request, by its id. */
export const CurrentActor = createParamDecorator((_data: unknown, context: ExecutionContext): Actor => {
  const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
  if (!request.user) {
    throw new Error('CurrentActor used on a route without API-key authentication');
  }
  return apiKeyActor(request.user.apiKeyId);
});
