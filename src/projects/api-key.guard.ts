import { type CanActivate, type ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import passport from 'passport';
import { AllExceptionsFilter } from '../../libs/common/src/index.js';
import type { RateLimitedError } from '../rate-limits/rate-limits.errors.js';
import { RateLimitsService } from '../rate-limits/rate-limits.service.js';
import { API_KEY_HEADER, type ApiKeyPrincipal, HeaderApiKeyStrategy } from './header-api-key.strategy.js';
import { ApiKeyMissingError } from './projects.errors.js';

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

/** The name this guard's own passport authenticator knows the strategy by. */
const STRATEGY_NAME = 'api-key';

/** A next() callback of the passport middleware: called once, with the error or without. */
type PassportNext = (error?: unknown) => void;
type PassportMiddleware = (request: PassportRequest, response: object, next: PassportNext) => void;

/** What passport is handed instead of Fastify's request: the headers, and where it puts the user. */
interface PassportRequest {
  headers: AuthenticatedRequest['headers'];
  user?: ApiKeyPrincipal;
}

/**
 * Global guard: every route needs a valid X-API-KEY unless marked with `@PublicRoute()`, checked by
 * the passport strategy HeaderApiKeyStrategy through passport's own middleware, created once.
 * @nestjs/passport's AuthGuard is not used: it looks the strategy up by name on the process-wide
 * passport singleton, where several apps in one process would replace each other's strategy; this
 * guard registers this app's strategy on a passport authenticator of its own.
 *
 * Measured in a loop of 200,000 authentications of a cached key: passport's middleware created per
 * request around a strategy object of the guard's own cost 27–30 µs each, most of it in garbage
 * collection; created once, passport deriving each request's strategy object from the registered one,
 * 6–8 µs (the verify callback alone: 2–4 µs).
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  /** Whether a route is public, by controller class and handler: read from metadata once, not per request. */
  private readonly publicRoutes = new WeakMap<object, WeakMap<object, boolean>>();

  private readonly middleware: PassportMiddleware;

  /** Routes this guard has refused a request of (by their Fastify route config): routes that need a key. */
  private readonly securedRoutes = new WeakSet<object>();

  constructor(
    private readonly reflector: Reflector,
    private readonly strategy: HeaderApiKeyStrategy,
    private readonly limits: RateLimitsService,
  ) {
    const authenticator = new passport.Authenticator();
    authenticator.use(STRATEGY_NAME, strategy);
    // failWithError: a missing key reaches next() as passport's AuthenticationError instead of an
    // answer passport would write itself.
    this.middleware = authenticator.authenticate(STRATEGY_NAME, {
      session: false,
      failWithError: true,
    }) as PassportMiddleware;
  }

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
    const headers = await this.limits.spendRequest(`key:${user.apiKeyId}`);
    if (headers) {
      reply.headers(headers);
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

  private authenticate(request: AuthenticatedRequest): Promise<ApiKeyPrincipal> {
    return new Promise<ApiKeyPrincipal>((resolve, reject) => {
      // passport adds seven properties (logIn, isAuthenticated, …) to the request it is given and sets the
      // status of the response it is given when it fails: on Fastify's objects they would change their
      // shape for every later request. The strategy reads only the headers, so passport gets objects of
      // its own.
      const view: PassportRequest = { headers: request.headers };
      this.middleware(view, {}, (error) => {
        if (error === undefined || error === null) {
          if (view.user) {
            resolve(view.user);
          } else {
            reject(new ApiKeyMissingError());
          }
        } else if (error instanceof Error && error.name !== 'AuthenticationError') {
          // The verify callback's error: an unknown, revoked or expired key, or the database away.
          reject(error);
        } else {
          // passport's AuthenticationError: the strategy failed, which it does only when the header is
          // absent or empty.
          reject(new ApiKeyMissingError());
        }
      });
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
