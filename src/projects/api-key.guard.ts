import { type ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard, PassportStrategy } from '@nestjs/passport';
import { HeaderAPIKeyStrategy } from 'passport-headerapikey';
import { ApiKeyInvalidError, ApiKeyMissingError } from './projects.errors.js';
import { ProjectsService } from './projects.service.js';

export const API_KEY_HEADER = 'X-API-KEY';
const PUBLIC_ROUTE = 'patchbay:public';

/** Marks a route that needs no API key (health, OAuth 2.0 callback, API documentation). */
export const PublicRoute = () => SetMetadata(PUBLIC_ROUTE, true);

export interface AuthenticatedRequest {
  user?: { projectId: string };
}

@Injectable()
export class ApiKeyStrategy extends PassportStrategy(HeaderAPIKeyStrategy, 'api-key') {
  constructor(private readonly projects: ProjectsService) {
    super({ header: API_KEY_HEADER, prefix: '' }, false);
  }

  async validate(apiKey: string): Promise<{ projectId: string }> {
    return { projectId: await this.projects.authenticate(apiKey) };
  }
}

/** Global guard: every route needs a valid X-API-KEY unless marked with `@PublicRoute()`. */
@Injectable()
export class ApiKeyGuard extends AuthGuard('api-key') {
  constructor(private readonly reflector: Reflector) {
    super();
  }

  override canActivate(context: ExecutionContext) {
    const isPublic = this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (isPublic) {
      return true;
    }
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    if (!request.headers['x-api-key']) {
      throw new ApiKeyMissingError();
    }
    return super.canActivate(context);
  }

  override handleRequest<TUser>(error: unknown, user: TUser): TUser {
    if (error instanceof Error) {
      throw error;
    }
    if (error || !user) {
      throw new ApiKeyInvalidError();
    }
    return user;
  }
}
