import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { REDACTED_PATHS, redactUrl } from './pino-logger.js';

describe('log redaction', () => {
  it('replaces the values of secret query parameters and keeps the rest', () => {
    expect(redactUrl('/v1/linked-accounts/oauth2/callback?code=abc123&state=xyz&lang=en')).toBe(
      '/v1/linked-accounts/oauth2/callback?code=%5Bredacted%5D&state=%5Bredacted%5D&lang=en',
    );
    expect(redactUrl('/v1/apps/search?intent=send+email')).toBe('/v1/apps/search?intent=send+email');
    expect(redactUrl('/v1/health')).toBe('/v1/health');
  });

  it('never writes API keys, authorization headers or credential fields', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = pino({ redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, sink);
    logger.info({ req: { headers: { 'x-api-key': 'pb_secret', authorization: 'Bearer tok' } } }, 'request');
    logger.info({ body: { api_key: 'k1', password: 'p1', token: 't1', client_secret: 's1' } }, 'body');
    const text = lines.join('');
    for (const secret of ['pb_secret', 'Bearer tok', 'k1', 'p1', 't1', 's1']) {
      expect(text).not.toContain(secret);
    }
  });
});
