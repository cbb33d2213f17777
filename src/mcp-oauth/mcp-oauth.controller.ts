import { All, Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PageResponse } from '../projects/end-user-page.js';
import { AppConfig } from '../config/app-config.js';
import { PublicRoute } from '../projects/api-key.guard.js';
import { AuthorizationServer } from './authorization-server.js';
import { MCP_SCOPE, projectMcpPath, projectMcpUrl } from './mcp-oauth.paths.js';
import { errorPage } from './sign-in-pages.js';
import { type BrowserRequest, SignInService } from './sign-in.service.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PROJECT = 'v1/mcp/p/:projectId';

/**
 * The OAuth 2.1 side of each project's MCP address: protected resource metadata (RFC 9728), the
 * authorization server's metadata (RFC 8414 and OpenID discovery) and endpoints (oidc-provider), and
 * the end user's sign-in and consent pages. Protocol endpoints, described by their metadata rather
 * than by the OpenAPI document.
 */
@ApiExcludeController()
@PublicRoute()
@Controller()
export class McpOAuthController {
  constructor(
    private readonly server: AuthorizationServer,
    private readonly signIn: SignInService,
    private readonly config: AppConfig,
  ) {}

  @Get(`.well-known/oauth-protected-resource/${PROJECT}`)
  async getProtectedResourceMetadata(@Param('projectId') projectId: string, @Res() reply: FastifyReply) {
    if (!UUID.test(projectId) || !(await this.server.providerFor(projectId))) {
      await reply.status(404).send({ error: 'No OAuth sign-in at this address' });
      return;
    }
    const resource = projectMcpUrl(this.config.publicBaseUrl, projectId);
    await reply
      .status(200)
      .header('cache-control', 'public, max-age=300')
      .send({
        resource,
        authorization_servers: [resource],
        scopes_supported: [MCP_SCOPE],
        bearer_methods_supported: ['header'],
        resource_name: 'Patchbay',
      });
  }

  /** RFC 8414 and OpenID discovery addresses of the project's issuer (both forms clients try). */
  @Get([
    `.well-known/oauth-authorization-server/${PROJECT}`,
    `.well-known/openid-configuration/${PROJECT}`,
    `${PROJECT}/.well-known/openid-configuration`,
    `${PROJECT}/.well-known/oauth-authorization-server`,
  ])
  async getAuthorizationServerMetadata(
    @Param('projectId') projectId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    if (!UUID.test(projectId)) {
      await reply.status(404).send({ error: 'No OAuth sign-in at this address' });
      return;
    }
    request.raw.url = `${projectMcpPath(projectId)}/.well-known/openid-configuration`;
    await this.server.serve(projectId, request, reply);
  }

  /** oidc-provider's endpoints: authorization (and its resume), token, registration, revocation, keys. */
  @All([
    `${PROJECT}/auth`,
    `${PROJECT}/auth/:uid`,
    `${PROJECT}/token`,
    `${PROJECT}/token/revocation`,
    `${PROJECT}/reg`,
    `${PROJECT}/jwks`,
  ])
  async serveAuthorizationServer(
    @Param('projectId') projectId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    if (!UUID.test(projectId)) {
      await send(reply, errorPage(404, 'Not found', 'There is nothing at this address.'));
      return;
    }
    await this.server.serve(projectId, request, reply);
  }

  @Get(`${PROJECT}/interaction/:uid`)
  async showSignInInteraction(
    @Param('projectId') projectId: string,
    @Param('uid') uid: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    await send(
      reply,
      UUID.test(projectId) ? await this.signIn.showInteraction(projectId, uid, browser(request, reply)) : notFound(),
    );
  }

  @Post(`${PROJECT}/interaction/:uid`)
  async submitConsent(
    @Param('projectId') projectId: string,
    @Param('uid') uid: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    const body = request.body;
    const form = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    await send(
      reply,
      UUID.test(projectId) ? await this.signIn.decide(projectId, uid, browser(request, reply), form) : notFound(),
    );
  }

  @Get(`${PROJECT}/sign-in/callback`)
  async returnFromIdentityProvider(
    @Param('projectId') projectId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    const query = (request.query ?? {}) as Record<string, unknown>;
    await send(reply, UUID.test(projectId) ? await this.signIn.signInCallback(projectId, query) : notFound());
  }
}

function browser(request: FastifyRequest, reply: FastifyReply): BrowserRequest {
  const origin = request.headers.origin;
  const fetchSite = request.headers['sec-fetch-site'];
  return {
    raw: request.raw,
    rawReply: reply.raw,
    origin: typeof origin === 'string' ? origin : undefined,
    fetchSite: typeof fetchSite === 'string' ? fetchSite : undefined,
  };
}

function notFound(): PageResponse {
  return errorPage(404, 'Not found', 'There is nothing at this address.');
}

async function send(reply: FastifyReply, page: PageResponse): Promise<void> {
  await reply.status(page.status).headers(page.headers).send(page.body);
}
