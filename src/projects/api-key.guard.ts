import { type CanActivate, type ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AllExceptionsFilter } from '../../libs/common/src/index.js';
import type { RateLimitedError } from '../rate-limits/rate-limits.errors.js';
import { RateLimitsService } from '../rate-limits/rate-limits.service.js';
import { API_KEY_HEADER, type ApiKeyPrincipal, HeaderApiKeyStrategy } from './header-api-key.strategy.js';
import { ApiKeyInvalidError, ApiKeyMissingError } from './projects.errors.js';

export { API_KEY_HEADER, type ApiKeyPrincipal } from './header-api-key.strategy.js';
const PUBLIC_ROUTE = 'patchbay:public';

/** Marks a route that needs no API key (health, OAuth 2.0 callback, API documentation). */
export const PublicRoute = () => SetMetadata(PUBLIC_ROUTE, true);

export interface AuthenticatedRequest {
  headers: Record<string, string | string[] | undefined>;
  ip: string;
  user?: ApiKeyPrincipal;
  /** Fastify's: `config` is one object per route, the same for every request of it. */
  routeOptions?: { config?: object };
}

export interface ReplyLike {
  headers(values: Record<string, string>): unknown;
}

const API_KEY_HEADER_LOWER = API_KEY_HEADER.toLowerCase();

/**
 * Global guard: every route needs a valid X-API-KEY unless marked with `@PublicRoute()`, checked by
 * HeaderApiKeyStrategy. The header is read here and handed to the strategy's `validate`; passport (with
 * passport-headerapikey) did the same through its middleware until 2026-11-29, at a cost per request of a
 * strategy object derived from the registered one, a regular expression built for the key's prefix and lodash
 * look-ups. Side by side in `npm run bench:execute` at concurrency 64 on the loaded machine (2026-11-29), the build
 * with passport answered 0.545 of the bare proxy's throughput and the same build without it 0.633, with 45 µs
 * less main-thread CPU per execution.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  /** Whether a route is public, by controller class and handler: read from metadata once, not per request. */
  private readonly publicRoutes = new WeakMap<object, WeakMap<object, boolean>>();

  /** Routes this guard has refused a request of (by their Fastify route config): routes that need a key. */
  private readonly securedRoutes = new WeakSet<object>();

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
    await this.admit(http.getRequest<AuthenticatedRequest>(), http.getResponse<ReplyLike>());
    return true;
  }

  /**
   * The check itself, for a route that needs a key: authenticates the request (`request.user`) and spends
   * one request of the key's budget; throws the answer's error otherwise. Also called by the execute
   * route, which Fastify serves without Nest's router (src/execution/execute-route.ts).
   */
  async admit(request: AuthenticatedRequest, reply: ReplyLike): Promise<ApiKeyPrincipal> {
    let user: ApiKeyPrincipal;
    try {
      user = await this.limits.authenticateFrom(request.ip, () => this.authenticate(request));
    } catch (error) {
      const route = request.routeOptions?.config;
      if (route) {
        this.securedRoutes.add(route);
      }
      throw error;
    }
    request.user = user;
    if (this.limits.enabled) {
      const headers = await this.limits.spendRequest(`key:${user.apiKeyId}`);
      if (headers) {
        reply.headers(headers);
      }
    }
    return user;
  }

  /**
   * The 429 that `admit` would answer, when it can be known before the request's route runs: the address is over
   * its failure budget, the route is one this guard has refused a request of, and the request's key is absent,
   * malformed, refused recently or no usable key's (HeaderApiKeyStrategy.refusesAtOnce). Undefined otherwise (then the request goes its usual way). It answers the same
   * status, headers and body as `admit`; what it saves is the work around them (see refuseBlockedEarly).
   */
  refusalBeforeRoute(request: AuthenticatedRequest): RateLimitedError | undefined {
    if (!this.limits.blocking) {
      return undefined;
    }
    // Cheapest first: a valid key (one cache look-up) goes its way at once.
    const apiKey = request.headers[API_KEY_HEADER_LOWER];
    if (Array.isArray(apiKey) || !this.strategy.refusesAtOnce(apiKey)) {
      return undefined;
    }
    const route = request.routeOptions?.config;
    if (route === undefined || !this.securedRoutes.has(route)) {
      return undefined;
    }
    return this.limits.refuseBlocked(request.ip);
  }

  /** The key's principal (at once when the key is cached), or the refusal: no header, or a key that does not work. */
  private authenticate(request: AuthenticatedRequest): ApiKeyPrincipal | Promise<ApiKeyPrincipal> {
    const apiKey = request.headers[API_KEY_HEADER_LOWER];
    if (apiKey === undefined || apiKey === '') {
      throw new ApiKeyMissingError();
    }
    // Node joins a repeated X-API-KEY into one string; a list is refused as no key would match it.
    if (typeof apiKey !== 'string') {
      throw new ApiKeyInvalidError();
    }
    return this.strategy.validate(apiKey);
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

/**
 * Answers, in a Fastify onRequest hook (before the body is read and before Nest's router, guards and pipes run),
 * the requests ApiKeyGuard would refuse with 429 because their address is over its failure budget and their key
 * is already known to fail (ApiKeyGuard.refusalBeforeRoute). Issue #34: a client retrying a revoked key in a loop
 * behind the same address as valid clients should cost the service as little as possible. The answer is rendered
 * by the one exception filter, so its status, headers and body are those of the usual refusal.
 */
export function refuseBlockedEarly(app: NestFastifyApplication): void {
  const guard = app.get(ApiKeyGuard);
  const filter = app.get(AllExceptionsFilter);
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRequest', (request, reply, done) => {
      const refusal = guard.refusalBeforeRoute(request);
      if (refusal) {
        filter.catch(refusal, new ExecutionContextHost([request, reply]));
        return;
      }
      done();
    });
}
