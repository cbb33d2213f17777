import { describe, expect, it } from 'vitest';
import { resolveOAuth2Client } from './oauth2-client.js';
import { OAuth2ClientNotConfiguredError } from './oauth2.errors.js';

const secrets = { app: 'app-secret', override: 'override-secret' };
const opened: boolean[] = [];
const secret = (fromOverride: boolean) => {
  opened.push(fromOverride);
  return fromOverride ? secrets.override : secrets.app;
};

describe('resolveOAuth2Client (the one rule of linking and refresh)', () => {
  it("uses the catalogue's client when the configuration has no override, opening only the app's secret", () => {
    opened.length = 0;
    expect(resolveOAuth2Client('GMAIL', { client_id: 'catalogue-id' }, undefined, secret)).toEqual({
      clientId: 'catalogue-id',
      clientSecret: 'app-secret',
      redirectUrl: undefined,
      scope: undefined,
    });
    expect(opened).toEqual([false]);
  });

  it("uses the override's client, secret, redirect URL and scope over the catalogue's", () => {
    opened.length = 0;
    const override = { client_id: 'own-id', redirect_url: 'https://example.com/cb', scope: 'read' };
    expect(resolveOAuth2Client('GMAIL', { client_id: 'catalogue-id' }, override, secret)).toEqual({
      clientId: 'own-id',
      clientSecret: 'override-secret',
      redirectUrl: 'https://example.com/cb',
      scope: 'read',
    });
    expect(opened).toEqual([true]);
  });

  it('refuses an unfilled placeholder or a missing value, naming what to set', () => {
    const refused = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        expect(error).toBeInstanceOf(OAuth2ClientNotConfiguredError);
        return (error as Error).message;
      }
      throw new Error('not refused');
    };
    expect(
      refused(() => resolveOAuth2Client('GMAIL', { client_id: '{{GMAIL_CLIENT_ID}}' }, undefined, secret)),
    ).toContain('client id');
    expect(refused(() => resolveOAuth2Client('GMAIL', {}, undefined, secret))).toContain('client id');
    expect(
      refused(() => resolveOAuth2Client('GMAIL', { client_id: 'id' }, undefined, () => '{{GMAIL_CLIENT_SECRET}}')),
    ).toContain('client secret');
    expect(refused(() => resolveOAuth2Client('GMAIL', { client_id: 'id' }, undefined, () => undefined))).toContain(
      'client secret',
    );
    // An override without its own client id does not fall back to the catalogue's.
    expect(refused(() => resolveOAuth2Client('GMAIL', { client_id: 'id' }, { scope: 'x' }, secret))).toContain(
      'client id',
    );
  });
});
