import { randomUUID } from 'node:crypto';
import { maxHeaderSize } from 'node:http';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule } from '@nestjs/swagger';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { FastifyServerOptions, RawServerDefault } from 'fastify';
import type { DestinationStream, Logger } from 'pino';
import {
  AllExceptionsFilter,
  BadRequestError,
  buildOpenApiDocument,
  createPino,
  INPUT_LIMITS,
  LazyChildLogger,
  MethodNotAllowedError,
  PinoLoggerService,
  prettyLogStream,
  UriTooLongError,
} from '../libs/common/src/index.js';
import { ApiModule } from './api.module.js';
import { API_VERSION } from './config/api-version.js';
import { type AppConfig, loadConfig } from './config/app-config.js';
import type { DatabaseModuleOptions } from './database/database.module.js';
import { serveExecuteDirectly } from './execution/execute-route.js';
import { API_KEY_HEADER, refuseBlockedEarly } from './projects/api-key.guard.js';
import { instrumentHttp } from './observability/http-instrumentation.js';
import { Metrics } from './observability/metrics.js';
import { Tracing } from './observability/tracing.js';

const REQUEST_ID = /^[\w.:-]{1,128}$/;
const BODY_LIMIT_BYTES = 5 * 1024 * 1024;
/** Characters of one path parameter; longer ones answer 414. */
const PATH_PARAM_MAX_LENGTH = 1024;

/** Each request's `request.log`, created only when something is logged at an enabled level. */
const lazyRequestLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (parent, bindings, options) =>
  new LazyChildLogger(parent as Logger, bindings, options as Record<string, unknown>);

export interface ApiAppOptions {
  database: DatabaseModuleOptions;
  /** Build the module graph without instantiating providers (OpenAPI generation, no database). */
  preview?: boolean;
  /** The settings to parse, once, for the whole app; the process environment when absent. */
  env?: Record<string, string | undefined>;
  /** Where log lines go; standard output when absent (tests capture them here). */
  logDestination?: DestinationStream;
}

/** The HTTP service, configured the same way for `patchbay serve`, the tests and OpenAPI generation. */
export async function createApiApp(options: ApiAppOptions): Promise<NestFastifyApplication> {
  const config = loadConfig(options.env ?? process.env);
  const logger = createPino(options.preview ? 'silent' : config.LOG_LEVEL, await logDestination(config, options));
  const adapter = new FastifyAdapter({
    loggerInstance: logger,
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: config.TRUST_PROXY?.split(',').map((entry) => entry.trim()) ?? false,
    routerOptions: { maxParamLength: PATH_PARAM_MAX_LENGTH },
    frameworkErrors: answerFrameworkError,
    requestIdHeader: false,
    childLoggerFactory: lazyRequestLogger,
    genReqId: (request: { headers: Record<string, string | string[] | undefined> }) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    ApiModule.forRoot({ database: options.database, config }),
    adapter,
    {
      logger: new PinoLoggerService(logger),
      preview: options.preview,
      abortOnError: false,
    },
  );
  const fastify = app.getHttpAdapter().getInstance();
  // An empty body with a JSON content type is no body: many clients (httpx and axios instances with
  // default headers, ACI's SDK) send the header on every request, DELETE included. Routes that take
  // a body still answer 422 "Field required" from their validation; malformed JSON stays 422.
  // Fastify's own parser: secure-json-parse, prototype poisoning refused.
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  app.useBodyParser<RawServerDefault>('application/json', { bodyLimit: BODY_LIMIT_BYTES }, (request, body, done) => {
    if (body.length === 0) {
      done(null, undefined);
    } else {
      void parseJson(request, body.toString('utf8'), done);
    }
  });
  if (!options.preview) {
    const metrics = app.get(Metrics);
    const tracing = app.get(Tracing);
    if (metrics.enabled || tracing.enabled) {
      instrumentHttp(fastify, metrics, tracing);
    }
  }
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    // A path served with other methods answers 405 naming them, before any body is parsed.
    if (request.is404) {
      const path = request.url.split('?', 1)[0];
      const allow = fastify.supportedMethods.filter((method) => fastify.findRoute({ method, url: path }) !== null);
      if (allow.length > 0) {
        done(new MethodNotAllowedError(request.method, allow.sort()));
        return;
      }
    }
    done();
  });
  if (!options.preview) {
    refuseBlockedEarly(app);
    serveExecuteDirectly(app);
    const document = openApiDocument(app);
    SwaggerModule.setup('v1/docs', app, document, {
      jsonDocumentUrl: 'v1/openapi.json',
      yamlDocumentUrl: 'v1/openapi.yaml',
      customSiteTitle: 'Patchbay API',
    });
  }
  return app;
}

/**
 * JSON lines, or readable lines when LOG_FORMAT asks for them (`auto`: when standard output is a
 * terminal and no other destination is given).
 */
async function logDestination(config: AppConfig, options: ApiAppOptions): Promise<DestinationStream | undefined> {
  const pretty =
    config.LOG_FORMAT === 'pretty' ||
    (config.LOG_FORMAT === 'auto' && !options.logDestination && process.stdout.isTTY === true);
  return pretty && !options.preview ? prettyLogStream(options.logDestination) : options.logDestination;
}

/**
 * Stops the service as a deploy needs it: no new connection is accepted (a request arriving on a
 * kept-alive connection answers 503 with `Connection: close`), the requests already accepted finish
 * within `timeoutMs` (then their connections are cut), and only then do the shutdown hooks write the
 * execution log and close the database, which releases DATA_DIR. Nest's own signal handling closes
 * in the other order (the hooks run before the HTTP server stops) and ends the process by the signal.
 */
export async function stopApiApp(app: NestFastifyApplication, timeoutMs: number): Promise<void> {
  const fastify = app.getHttpAdapter().getInstance();
  // A connection kept alive after its last answer would hold the server open until the deadline.
  const idle = setInterval(() => fastify.server.closeIdleConnections(), 100);
  const cut = setTimeout(() => fastify.server.closeAllConnections(), timeoutMs);
  try {
    await fastify.close();
  } finally {
    clearInterval(idle);
    clearTimeout(cut);
  }
  await app.close();
}

/**
 * What Fastify's router refuses before any route runs, in the service's `{"error"}` shape: a path whose
 * percent-encoding is malformed (400) and a path parameter over PATH_PARAM_MAX_LENGTH (414).
 */
const answerFrameworkError: NonNullable<FastifyServerOptions['frameworkErrors']> = (error, _request, reply) => {
  const refused =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new UriTooLongError(`A path parameter is longer than ${PATH_PARAM_MAX_LENGTH} characters`)
      : new BadRequestError(
          error.code === 'FST_ERR_BAD_URL' ? 'The URL path has a malformed percent-encoding' : 'Bad request',
        );
  const [status, body] = new AllExceptionsFilter().render(refused);
  // Written as Fastify writes its own router errors: no route (and so no hook) has run.
  reply.raw.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
};

export function openApiDocument(app: NestFastifyApplication): OpenAPIObject {
  return buildOpenApiDocument(app, {
    title: 'Patchbay',
    description:
      'Tool integration for AI agents: search a catalogue of apps and functions, get LLM-ready function ' +
      'definitions, configure apps, link accounts and execute functions for linked-account owners.',
    version: API_VERSION,
    apiKeyHeader: API_KEY_HEADER,
    limits: {
      bodyLimitBytes: BODY_LIMIT_BYTES,
      maxHeaderBytes: maxHeaderSize,
      pathParamMaxLength: PATH_PARAM_MAX_LENGTH,
      input: INPUT_LIMITS,
    },
  });
}

/** The committed OpenAPI document, generated without starting a database. */
export async function generateOpenApi(): Promise<OpenAPIObject> {
  const app = await createApiApp({ database: { holder: 'openapi', runMigrations: false }, preview: true });
  try {
    return openApiDocument(app);
  } finally {
    await app.close();
  }
}
