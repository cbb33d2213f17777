import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateOpenApi } from '../../../src/api-app.js';
import { TestApp } from '../../helpers/test-app.js';

const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

describe('OpenAPI document', () => {
  let app: TestApp;
  let generated: Record<string, any>;

  beforeAll(async () => {
    generated = JSON.parse(JSON.stringify(await generateOpenApi()));
    app = await TestApp.start();
  });

  afterAll(() => app.close());

  it('matches the committed openapi.json (run `npm run openapi` after changing the API)', () => {
    const committed = JSON.parse(readFileSync('openapi.json', 'utf8'));
    expect(generated).toEqual(committed);
  });

  it('is served at /v1/openapi.json without a key, identical to the generated one', async () => {
    const res = await app.get('/v1/openapi.json', { apiKey: null });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(generated);
    expect(res.body.info.version).toBe('0.0.1-beta.3');
  });

  it('has an interactive page at /v1/docs', async () => {
    const res = await app.get('/v1/docs', { apiKey: null });
    expect(res.status).toBe(200);
    expect(res.text).toContain('swagger');
  });

  it('gives every operation a unique id and declares the API key on all but public routes', () => {
    const ids: string[] = [];
    for (const [path, item] of Object.entries<Record<string, any>>(generated.paths)) {
      for (const method of HTTP_METHODS) {
        const operation = item[method];
        if (!operation) {
          continue;
        }
        ids.push(operation.operationId);
        const isPublic =
          path.startsWith('/v1/health') ||
          path === '/v1/linked-accounts/oauth2/callback' ||
          path === '/v1/mcp-servers/oauth-client';
        expect(Boolean(operation.security?.some((s: object) => 'X-API-KEY' in s)), `${method} ${path}`).toBe(!isPublic);
      }
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('tags every operation once, with the resource its path names', () => {
    const tagged: string[] = [];
    for (const [path, item] of Object.entries<Record<string, any>>(generated.paths)) {
      for (const method of HTTP_METHODS) {
        const operation = item[method];
        if (!operation) {
          continue;
        }
        const resource = path.split('/')[2];
        expect(operation.tags, `${method} ${path}`).toEqual([resource]);
        tagged.push(resource);
      }
    }
    expect(new Set(tagged)).toEqual(
      new Set([
        'app-configurations',
        'apps',
        'audit-events',
        'executions',
        'functions',
        'health',
        'linked-accounts',
        'mcp',
        'mcp-servers',
        'project',
      ]),
    );
  });

  it('documents the 422 shape and the error body', () => {
    expect(generated.components.schemas.HTTPValidationError).toBeDefined();
    expect(generated.components.schemas.ErrorResponse.properties.error.type).toBe('string');
  });
});
