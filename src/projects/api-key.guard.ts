import { type CanActivate, type ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import passport from 'passport';
import { RateLimitsService } from '../rate-limits/rate-limits.service.js';
import { type ApiKeyPrincipal, HeaderApiKeyStrategy } from './header-api-key.strategy.js';
import { ApiKeyMissingError } from './projects.errors.js';

export { API_KEY_HEADER, type ApiKeyPrincipal } from './header-api-key.strategy.js';
const PUBLIC_ROUTE = 'patchbay:public';

/** Marks a route that needs no API key (health, OAuth 2.0 callback, API documentation). */
export const PublicRoute = () => SetMetadata(PUBLIC_ROUTE, true);

export interface AuthenticatedRequest {
  headers: Record<string, string | string[] | undefined>;
  ip: string;
  user?: ApiKeyPrincipal;
}

interface ReplyLike {
  headers(values: Record<string, string>): unknown;
}

/** Stateless: strategies are handed to it as instances, so no app's strategy is registered on it. */
const authenticator = new passport.Authenticator();
const AUTHENTICATE_OPTIONS = { session: false };

/**
 * Global guard: every route needs a valid X-API-KEY unless marked with `@PublicRoute()`, checked by
 * the passport strategy HeaderApiKeyStrategy. @nestjs/passport's AuthGuard is not used: it looks the
 * strategy up by name on the process-wide passport singleton, where several apps in one process
 * would replace each other's strategy; this guard hands passport this app's strategy instance.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  /** Whether a route is public, by controller class and handler: read from metadata once, not per request. */
  private readonly publicRoutes = new WeakMap<object, WeakMap<object, boolean>>();

  constructor(
    private readonly reflector: Reflector,
    private readonly strategy: HeaderApiKeyStrategy,
    private readonly limits: RateLimitsService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.isPublic(context)) {
      return true;
    }
    const http = context.switchToHttp();
    const request = http.getRequest<AuthenticatedRequest>();
    const reply = http.getResponse<ReplyLike>();
    const user = await this.limits.authenticateFrom(request.ip, () => this.authenticate(request, reply));
    request.user = user;
    const headers = await this.limits.spendRequest(`key:${user.apiKeyId}`);
    if (headers) {
      reply.headers(headers);
    }
    return true;
  }

  private authenticate(request: AuthenticatedRequest, reply: ReplyLike): Promise<ApiKeyPrincipal> {
    return new Promise<ApiKeyPrincipal>((resolve, reject) => {
      // passport sets success/fail/error on the strategy object it is given, and the strategy calls
      // them when its verify callback settles: one shared object would hand a request's outcome to
      // whichever request came last (concurrent first uses of a key, whose lookups overlap, were
      // never answered). Each request gets its own object, with this app's strategy as prototype.
      const authenticate = authenticator.authenticate(
        Object.create(this.strategy) as HeaderApiKeyStrategy,
        AUTHENTICATE_OPTIONS,
        // The verify callback's error (an unknown, revoked or expired key) comes as `error`; the
        // strategy fails without an error only when the header is absent or empty.
        (error: unknown, user: ApiKeyPrincipal | false) => {
          if (error) {
            reject(error instanceof Error ? error : new ApiKeyMissingError());
          } else if (user) {
            resolve(user);
          } else {
            reject(new ApiKeyMissingError());
          }
        },
      ) as (request: unknown, response: unknown, next: (error?: unknown) => void) => void;
      authenticate(request, reply, (error) => reject(error instanceof Error ? error : new ApiKeyMissingError()));
    });
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
