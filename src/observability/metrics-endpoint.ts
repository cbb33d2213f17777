import { createServer, type Server } from 'node:http';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { constantTimeEqual } from '../../libs/common/src/index.js';
import { AppConfig } from '../config/app-config.js';
import { Metrics } from './metrics.js';

/**
 * `GET /metrics` on a port of its own (METRICS_PORT, on METRICS_HOST: loopback by default), never on the API's:
 * a scraper reaches it only where the operator opens it, the API's load balancer never routes to it, and its
 * answers cost the API's event loop nothing while nobody scrapes. With METRICS_TOKEN it also asks for
 * `Authorization: Bearer <token>`. A plain node:http server: one route, no framework needed.
 */
@Injectable()
export class MetricsEndpoint implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Metrics');
  private server?: Server;

  constructor(
    private readonly metrics: Metrics,
    private readonly config: AppConfig,
    private readonly http: HttpAdapterHost,
  ) {}

  /** Only the serving process exposes metrics (a command-line run has nothing to scrape). */
  async onApplicationBootstrap(): Promise<void> {
    if (!this.metrics.enabled || !this.http.httpAdapter) {
      return;
    }
    const expected = this.config.METRICS_TOKEN ? `Bearer ${this.config.METRICS_TOKEN}` : undefined;
    const server = createServer((request, response) => {
      if (request.method !== 'GET' || request.url?.split('?', 1)[0] !== '/metrics') {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: GET /metrics\n');
        return;
      }
      if (expected && !constantTimeEqual(request.headers.authorization ?? '', expected)) {
        response
          .writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' })
          .end('Unauthorized: send Authorization: Bearer <METRICS_TOKEN>\n');
        return;
      }
      this.metrics.registry.metrics().then(
        (text) => response.writeHead(200, { 'content-type': this.metrics.registry.contentType }).end(text),
        () => response.writeHead(500, { 'content-type': 'text/plain' }).end('Metrics failed\n'),
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.config.METRICS_PORT, this.config.METRICS_HOST, () => resolve());
    });
    this.server = server;
    const address = server.address() as { port: number };
    this.logger.log(`Metrics on http://${this.config.METRICS_HOST}:${address.port}/metrics`);
  }

  /** The port it listens on (METRICS_PORT=0 picks a free one), once started. */
  get port(): number | undefined {
    return (this.server?.address() as { port: number } | null)?.port;
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }
}
