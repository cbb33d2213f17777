import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One request exactly as the upstream received it. */
export interface Received {
  method: string;
  /** Raw request target: path and query string, undecoded. */
  url: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body's bytes, for bodies that are not UTF-8 text. */
  bytes: Buffer;
}

export type Responder = (request: Received, response: ServerResponse, index: number) => void | Promise<void>;

const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
};

/**
 * A real HTTP server on 127.0.0.1 standing in for an app's API (or its token endpoint): it records
 * every request it receives and answers with the current responder (default: 200 `{"ok": true}`).
 */
export class Upstream {
  readonly received: Received[] = [];
  private responder: Responder = (_request, response) => json(response, 200, { ok: true });
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<Upstream> {
    const server = createServer();
    const upstream = new Upstream(server);
    server.on('connection', (socket) => {
      upstream.sockets.add(socket);
      socket.on('close', () => upstream.sockets.delete(socket));
    });
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const url = request.url ?? '/';
        const parsed = new URL(url, 'http://upstream');
        const received: Received = {
          method: request.method ?? '',
          url,
          path: url.split('?')[0],
          query: parsed.searchParams,
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          bytes: Buffer.concat(chunks),
        };
        upstream.received.push(received);
        void Promise.resolve(upstream.responder(received, response, upstream.received.length - 1)).catch(() =>
          response.destroy(),
        );
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return upstream;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get last(): Received {
    const last = this.received.at(-1);
    if (!last) {
      throw new Error('the upstream received no request');
    }
    return last;
  }

  respond(responder: Responder): void {
    this.responder = responder;
  }

  respondJson(status: number, body: unknown, headers: Record<string, string> = {}): void {
    this.respond((_request, response) => json(response, status, body, headers));
  }

  reset(): void {
    this.received.length = 0;
    this.respond((_request, response) => json(response, 200, { ok: true }));
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) {
      socket.destroy();
    }
    this.server.close();
    await once(this.server, 'close');
  }
}

export { json };
