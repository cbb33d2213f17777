import { Module } from '@nestjs/common';
import { AppConfigurationsModule } from '../app-configurations/app-configurations.module.js';
import { AppsModule } from '../apps/apps.module.js';
import { FunctionsModule } from '../functions/functions.module.js';
import { LinkedAccountsModule } from '../linked-accounts/linked-accounts.module.js';
import { RateLimitsModule } from '../rate-limits/rate-limits.module.js';
import { AuthorizationServer } from '../oauth2/authorization-server.js';
import { ConnectorRegistry } from './connectors/connector-registry.js';
import { ExecutionCache } from './execution-cache.js';
import { ExecutionLogWriter } from './execution-log.writer.js';
import { ExecutionController } from './execution.controller.js';
import { ExecutionRepository } from './execution.repository.js';
import { ExecutionService } from './execution.service.js';
import { FunctionRunner } from './function-runner.js';
import { FunctionInputs } from './function-input.js';
import { McpExecutor } from './mcp-executor.js';
import { McpUpstreamModule } from './mcp-upstream.module.js';
import { OAuth2Tokens } from './oauth2-tokens.js';
import { RestExecutor } from './rest-executor.js';
import { StoredSecrets } from './stored-secrets.js';
import { ApiKeySchemeStrategy } from './strategies/api-key.strategy.js';
import { HttpBasicSchemeStrategy } from './strategies/http-basic.strategy.js';
import { HttpBearerSchemeStrategy } from './strategies/http-bearer.strategy.js';
import { NoAuthSchemeStrategy } from './strategies/no-auth.strategy.js';
import { OAuth2SchemeStrategy } from './strategies/oauth2.strategy.js';
import { UpstreamHttp } from './upstream-http.js';

/** POST /v1/functions/{name}/execute and GET /v1/executions. */
@Module({
  imports: [
    AppsModule,
    FunctionsModule,
    AppConfigurationsModule,
    LinkedAccountsModule,
    RateLimitsModule,
    McpUpstreamModule,
  ],
  controllers: [ExecutionController],
  providers: [
    ExecutionService,
    FunctionRunner,
    ExecutionRepository,
    ExecutionCache,
    ExecutionLogWriter,
    FunctionInputs,
    StoredSecrets,
    UpstreamHttp,
    RestExecutor,
    McpExecutor,
    OAuth2Tokens,
    // Stateless: the refresh grant goes through the same openid-client set-up as linking.
    AuthorizationServer,
    ConnectorRegistry,
    NoAuthSchemeStrategy,
    ApiKeySchemeStrategy,
    HttpBasicSchemeStrategy,
    HttpBearerSchemeStrategy,
    OAuth2SchemeStrategy,
  ],
  exports: [ExecutionService, ExecutionCache],
})
export class ExecutionModule {}
