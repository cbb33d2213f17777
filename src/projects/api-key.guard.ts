import { type CanActivate, type ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiKeyMissingError } from './projects.errors.js';
import { ProjectsService } from './projects.service.js';

export const API_KEY_HEADER = 'X-API-KEY';
const PUBLIC_ROUTE = 'patchbay:public';

/** Marks a route that needs no API key (health, OAuth 2.0 callback, API documentation). */
export const PublicRoute = () => SetMetadata(PUBLIC_ROUTE, true);

export interface AuthenticatedRequest {
  headers: Record<string, string | string[] | undefined>;
  user?: { projectId: string };
}

/**
 * Global guard: every route needs a valid X-API-KEY unless marked with `@PublicRoute()`. One header
 * and one (cached) lookup: a plain guard rather than Passport, whose strategy machinery costs more
 * per request than the check itself on the execution hot path.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  /** Whether a route is public, by controller class and handler: read from metadata once, not per request. */
  private readonly publicRoutes = new WeakMap<object, WeakMap<object, boolean>>();

  constructor(
    private readonly reflector: Reflector,
    private readonly projects: ProjectsService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.isPublic(context)) {
      return true;
    }
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const apiKey = request.headers['x-api-key'];
    if (typeof apiKey !== 'string' || apiKey === '') {
      throw new ApiKeyMissingError();
    }
    request.user = { projectId: await this.projects.authenticate(apiKey) };
    return true;
  }

  private isPublic(context: ExecutionContext): boolean {
    const controller = context.getClass();
    const handler = context.getHandler();
    let routes = this.publicRoutes.get(controller);
    if (!routes) {
      routes = new WeakMap();
      this.publicRoutes.set(controller, routes);
    }
    let isPublic = routes.get(handler);
    if (isPublic === undefined) {
      isPublic = Boolean(this.reflector.getAllAndOverride<boolean | undefined>(PUBLIC_ROUTE, [handler, controller]));
      routes.set(handler, isPublic);
    }
    return isPublic;
  }
}
