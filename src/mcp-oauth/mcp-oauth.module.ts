import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { AuthorizationServer } from './authorization-server.js';
import { IdentityProvidersController } from './identity-providers.controller.js';
import { IdentityProvidersService } from './identity-providers.service.js';
import { McpOAuthController } from './mcp-oauth.controller.js';
import { McpOAuthRepository } from './mcp-oauth.repository.js';
import { SignInService } from './sign-in.service.js';

/**
 * OAuth 2.1 for /v1/mcp: each project's MCP address (/v1/mcp/p/{project}) is a protected resource
 * with its own authorization server, whose users sign in through the project's OpenID Connect
 * provider. Exports AuthorizationServer, whose `verifyAccessToken` the MCP module uses to turn an
 * access token into its caller.
 */
@Module({
  imports: [AuditModule],
  controllers: [IdentityProvidersController, McpOAuthController],
  providers: [AuthorizationServer, IdentityProvidersService, McpOAuthRepository, SignInService],
  exports: [AuthorizationServer],
})
export class McpOAuthModule {}
