import { createServer } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FunctionEntity } from '../../../src/functions/function.entity.js';
import { executionScenario, type Scenario } from '../../factories/execution.factory.js';
import { TestApp } from '../../helpers/test-app.js';
import { json, Upstream } from './upstream.js';

/**
 * How upstream answers become results: success and failure mapping, timeouts, oversize answers,
 * retries. Timeouts and backoff are set small through the environment so the file runs fast.
 */
describe('POST /v1/functions/{function_name}/execute: upstream answers', () => {
  let app: TestApp;
  let upstream: Upstream;
  let projectId: string;
  let get: Scenario;
  let post: Scenario;

  const fn = (method: string) =>
    ({
      protocol: 'rest',
      protocol_data: { method, path: '/thing', server_url: upstream.url },
      parameters: { type: 'object', properties: {}, required: [], visible: [], additionalProperties: false },
    }) as Partial<FunctionEntity>;

  beforeAll(async () => {
    app = await TestApp.start({
      EXECUTION_TIMEOUT_MS: '400',
      EXECUTION_CONNECT_TIMEOUT_MS: '400',
      EXECUTION_MAX_RESPONSE_BYTES: '1024',
      EXECUTION_MAX_RETRIES: '2',
      EXECUTION_RETRY_BASE_DELAY_MS: '10',
      EXECUTION_RETRY_MAX_WAIT_MS: '2000',
    });
    upstream = await Upstream.start();
    projectId = (await app.ctx.newProject()).projectId;
    get = await executionScenario(app, {
      projectId,
      scheme: 'api_key',
      settings: { location: 'header', name: 'X-Key' },
      credentials: { api_key: 'super-secret-key-123' },
      function: fn('GET'),
    });
    post = await executionScenario(app, {
      projectId,
      scheme: 'api_key',
      settings: { location: 'query', name: 'key' },
      credentials: { api_key: 'another-secret-456' },
      function: fn('POST'),
    });
  });

  afterAll(async () => {
    await upstream.close();
    await app.close();
  });

  beforeEach(() => upstream.reset());

  describe('result mapping', () => {
    it('2xx JSON → success with the parsed JSON', async () => {
      upstream.respondJson(201, { id: 7, tags: ['a'], nested: { ok: true } });
      const res = await post.execute();
      expect(res.body).toEqual({ success: true, data: { id: 7, tags: ['a'], nested: { ok: true } }, error: null });
    });

    it('2xx text → success with the text', async () => {
      upstream.respond((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('plain words');
      });
      const res = await get.execute();
      expect(res.body).toEqual({ success: true, data: 'plain words', error: null });
    });

    it('2xx empty → success with {}', async () => {
      upstream.respond((_req, res) => {
        res.writeHead(204);
        res.end();
      });
      expect((await get.execute()).body).toEqual({ success: true, data: {}, error: null });
    });

    it('2xx binary → success with the bytes in base64, their media type and their count', async () => {
      // A PNG's signature and header: not UTF-8, so never text whatever the label.
      const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
      upstream.respond((_req, res) => {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(png);
      });
      const res = await get.execute();
      expect(res.body).toEqual({
        success: true,
        data: { media_type: 'image/png', size_bytes: png.length, base64: png.toString('base64') },
        error: null,
      });
      // Labelled as bytes, UTF-8 text stays bytes; without a label, bytes that are not UTF-8 are binary.
      upstream.respond((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/pdf' });
        res.end('%PDF-1.4 text only');
      });
      expect((await get.execute()).body.data).toEqual({
        media_type: 'application/pdf',
        size_bytes: 18,
        base64: Buffer.from('%PDF-1.4 text only').toString('base64'),
      });
      upstream.respond((_req, res) => {
        res.removeHeader('content-type');
        res.writeHead(200);
        res.end(Buffer.from([0xff, 0x00, 0xfe]));
      });
      expect((await get.execute()).body.data).toEqual({
        media_type: 'application/octet-stream',
        size_bytes: 3,
        base64: '/wD+',
      });
    });

    it('2xx text in its charset, JSON under any label, white space as empty', async () => {
      upstream.respond((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain; charset=ISO-8859-1' });
        res.end(Buffer.from([0x63, 0x61, 0x66, 0xe9])); // "café" in Latin-1
      });
      expect((await get.execute()).body.data).toBe('café');
      upstream.respond((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end('{"id":1}');
      });
      expect((await get.execute()).body.data).toEqual({ id: 1 });
      upstream.respond((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/vnd.api+json' });
        res.end('{"data":{"type":"pets","id":"1"}}');
      });
      expect((await get.execute()).body.data).toEqual({ data: { type: 'pets', id: '1' } });
      upstream.respond((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(' \n');
      });
      expect((await get.execute()).body.data).toEqual({});
    });

    it('4xx binary → failure naming its size and media type, never the bytes', async () => {
      upstream.respond((_req, res) => {
        res.writeHead(415, { 'content-type': 'image/gif' });
        res.end(Buffer.from('47494638396101000100800000ffffff00000021f9', 'hex'));
      });
      expect((await post.execute()).body).toEqual({
        success: false,
        data: null,
        error: 'Upstream answered HTTP 415 with a 21-byte image/gif body (binary, not shown)',
      });
    });

    it('4xx JSON → failure with the status and the body as JSON text', async () => {
      upstream.respondJson(404, { message: 'Not Found', documentation_url: 'https://docs.example.com/x' });
      const res = await get.execute();
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: false,
        data: null,
        error: 'Upstream answered HTTP 404: {"message":"Not Found","documentation_url":"https://docs.example.com/x"}',
      });
    });

    it('5xx text → failure with the status and the text; empty bodies say so', async () => {
      upstream.respond((_req, res) => {
        res.writeHead(500, { 'content-type': 'text/html' });
        res.end('<h1>boom</h1>');
      });
      expect((await post.execute()).body.error).toBe('Upstream answered HTTP 500: <h1>boom</h1>');
      upstream.respond((_req, res) => {
        res.writeHead(400);
        res.end();
      });
      expect((await post.execute()).body.error).toBe('Upstream answered HTTP 400 with an empty body');
    });

    it('never lets a credential through an error message', async () => {
      upstream.respond((req, res) => json(res, 401, { error: `bad key ${String(req.headers['x-key'])}` }));
      const res = await get.execute();
      expect(res.body.error).toBe('Upstream answered HTTP 401: {"error":"bad key [redacted]"}');
      expect(res.text).not.toContain('super-secret-key-123');
    });
  });

  describe('network failures and limits', () => {
    it('a timeout → failure naming the timeout, within the configured bound', async () => {
      upstream.respond(() => undefined);
      const started = Date.now();
      const res = await post.execute();
      expect(Date.now() - started).toBeLessThan(2000);
      expect(res.body).toEqual({
        success: false,
        data: null,
        error: `Timeout: ${upstream.url} did not answer within 400 ms (EXECUTION_TIMEOUT_MS)`,
      });
    });

    it('a body that stalls half-way also times out (the whole exchange is bounded)', async () => {
      upstream.respond((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"partial":');
      });
      const res = await post.execute();
      expect(res.body.error).toBe(`Timeout: ${upstream.url} did not answer within 400 ms (EXECUTION_TIMEOUT_MS)`);
    });

    it('a refused connection → failure naming it', async () => {
      const port = await closedPort();
      const s = await executionScenario(app, {
        projectId,
        scheme: 'no_auth',
        function: {
          ...fn('POST'),
          protocol_data: { method: 'POST', path: '/x', server_url: `http://127.0.0.1:${port}` },
        },
      });
      const res = await s.execute();
      expect(res.body).toEqual({ success: false, data: null, error: `Connection refused by http://127.0.0.1:${port}` });
    });

    it('an answer larger than EXECUTION_MAX_RESPONSE_BYTES is refused, by its length or while streaming', async () => {
      upstream.respond((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '5000' });
        res.end(JSON.stringify({ data: 'x'.repeat(5000 - 11) }));
      });
      const declared = await post.execute();
      expect(declared.body).toEqual({
        success: false,
        data: null,
        error:
          `The response of ${upstream.url} is larger than the 1024-byte limit (EXECUTION_MAX_RESPONSE_BYTES); ` +
          'it was refused unread',
      });
      upstream.respond((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        const timer = setInterval(() => res.write('x'.repeat(512)), 5);
        res.on('close', () => clearInterval(timer));
      });
      const streamed = await post.execute();
      expect(streamed.body.error).toBe(declared.body.error);
    });

    it('an answer just under the limit is read', async () => {
      upstream.respond((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('y'.repeat(1024));
      });
      expect((await post.execute()).body).toEqual({ success: true, data: 'y'.repeat(1024), error: null });
    });
  });

  describe('retries', () => {
    it('retries an idempotent call on 502, 503, 504 and 429, then uses the answer', async () => {
      const statuses = [503, 502, 200];
      upstream.respond((_req, res, index) => json(res, statuses[index] ?? 200, { attempt: index }));
      const res = await get.execute();
      expect(res.body).toEqual({ success: true, data: { attempt: 2 }, error: null });
      expect(upstream.received).toHaveLength(3);
      upstream.reset();
      upstream.respond((_req, res, index) =>
        json(res, index === 0 ? 504 : index === 1 ? 429 : 200, { attempt: index }),
      );
      expect((await get.execute()).body.data).toEqual({ attempt: 2 });
    });

    it('gives up after EXECUTION_MAX_RETRIES retries and reports the last answer', async () => {
      upstream.respondJson(503, { error: 'busy' });
      const res = await get.execute();
      expect(upstream.received).toHaveLength(3);
      expect(res.body).toEqual({ success: false, data: null, error: 'Upstream answered HTTP 503: {"error":"busy"}' });
    });

    it('never retries a non-idempotent method', async () => {
      upstream.respondJson(503, { error: 'busy' });
      const res = await post.execute();
      expect(upstream.received).toHaveLength(1);
      expect(res.body.error).toBe('Upstream answered HTTP 503: {"error":"busy"}');
    });

    it('does not retry other statuses', async () => {
      upstream.respondJson(500, { error: 'bug' });
      await get.execute();
      expect(upstream.received).toHaveLength(1);
    });

    it('waits as long as Retry-After says', async () => {
      upstream.respond((_req, res, index) =>
        index === 0 ? json(res, 429, { error: 'slow down' }, { 'retry-after': '1' }) : json(res, 200, { ok: 1 }),
      );
      const started = Date.now();
      const res = await get.execute();
      const elapsed = Date.now() - started;
      expect(res.body.data).toEqual({ ok: 1 });
      expect(upstream.received).toHaveLength(2);
      expect(elapsed).toBeGreaterThanOrEqual(950);
      expect(elapsed).toBeLessThan(1900);
    });

    it('does not retry when Retry-After asks for more than the waiting budget', async () => {
      upstream.respondJson(503, { error: 'maintenance' }, { 'retry-after': '30' });
      const started = Date.now();
      const res = await get.execute();
      expect(Date.now() - started).toBeLessThan(1000);
      expect(upstream.received).toHaveLength(1);
      expect(res.body.error).toBe('Upstream answered HTTP 503: {"error":"maintenance"}');
    });

    it('retries an idempotent call whose connection was reset, but not a POST', async () => {
      upstream.respond((_req, res, index) => {
        if (index === 0) {
          res.socket?.destroy();
        } else {
          json(res, 200, { after: 'reset' });
        }
      });
      const res = await get.execute();
      expect(res.body).toEqual({ success: true, data: { after: 'reset' }, error: null });
      expect(upstream.received).toHaveLength(2);

      upstream.reset();
      upstream.respond((_req, res) => {
        res.socket?.destroy();
      });
      const failed = await post.execute();
      expect(upstream.received).toHaveLength(1);
      expect(failed.body.success).toBe(false);
      expect(failed.body.error).toMatch(
        new RegExp(`^The connection to ${upstream.url} was closed before a complete answer`),
      );
      expect(failed.text).not.toContain('another-secret-456');
    });
  });
});

/** A port on which nothing listens. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
