import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { AllExceptionsFilter, InputLimitsGuard, RequestValidationPipe } from '../../libs/common/src/index.js';
import { ApiKeyGuard, type AuthenticatedRequest } from '../projects/api-key.guard.js';
import { addBudgetHeaders } from '../rate-limits/rate-limits.service.js';
import { FunctionExecute } from './execution.dto.js';
import { type ExecutionOrigin, ExecutionService } from './execution.service.js';

/** A REST execution's origin: the owner's budget, when one applies, answers in the reply's `RateLimit-*` headers. */
export function restOrigin(reply: FastifyReply): ExecutionOrigin {
  return { source: 'rest', onBudget: (budget) => addBudgetHeaders(reply, budget) };
}

/** Route config (`@RouteConfig`) marking the controller method whose route Fastify serves directly. */
export const DIRECT_ROUTE = 'patchbay:direct-execute';

const BODY = { type: 'body', metatype: FunctionExecute, data: undefined } as const;

/**
 * POST /v1/functions/{name}/execute, the hot path, served by Fastify with the same objects Nest's router
 * would run for it, in the same order: the API-key guard, the input-limits guard, the validation pipe on the
 * body, ExecutionController's call of ExecutionService, and on any error the one exception filter. The
 * controller method stays where it is: it declares the route (path, OpenAPI document) and Nest registers it;
 * this swaps only the handler Fastify calls, through Fastify's onRoute hook.
 *
 * Why: Nest's router runs every request through an execution context per guard stage, a pipe stage per
 * parameter (three here, each awaited), a route-metadata lookup per guard and its response controller;
 * measured with `npm run bench:execute` that is about 15 µs of CPU per execution (6 % of it) that this does
 * without. Any guard, pipe or filter added to the API module must be added here too: the e2e specs of
 * execution and hostile input run through this route.
 */
export function serveExecuteDirectly(app: NestFastifyApplication): void {
  const apiKey = app.get(ApiKeyGuard);
  const inputLimits = app.get(InputLimitsGuard);
  const validation = app.get(RequestValidationPipe);
  const execution = app.get(ExecutionService, { strict: false });
  const filter = app.get(AllExceptionsFilter);

  const fail = (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    filter.catch(error, new ExecutionContextHost([request, reply]));
  };
  const handler = (request: FastifyRequest, reply: FastifyReply): void => {
    const params = request.params as { function_name: string };
    // As Nest's Fastify adapter does: an empty path parameter matches no route.
    if (params.function_name === '') {
      reply.callNotFound();
      return;
    }
    apiKey
      .admit(request as unknown as AuthenticatedRequest, reply)
      .then((user) => {
        inputLimits.check(request);
        const body = validation.transform(request.body, BODY) as FunctionExecute;
        return execution.executeFunction(user.projectId, params.function_name, body, restOrigin(reply));
      })
      .then(
        (result) => reply.code(200).send(result),
        (error: unknown) => fail(error, request, reply),
      );
  };

  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRoute', (route: RouteOptions) => {
      if ((route.config as Record<string, unknown> | undefined)?.[DIRECT_ROUTE]) {
        route.handler = handler;
      }
    });
}
