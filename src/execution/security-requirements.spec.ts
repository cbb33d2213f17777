import { describe, expect, it } from 'vitest';
import type { SecurityMember } from '../functions/openapi-wire.js';
import { extraCredentials } from './security-requirements.js';

const key: SecurityMember = { scheme: 'Key', kind: 'api_key', in: 'header', name: 'X-Key' };
const appId: SecurityMember = { scheme: 'AppId', in: 'header', name: 'X-App-Id' };
const token: SecurityMember = { scheme: 'Token', in: 'query', name: 'token' };
const oauth: SecurityMember = { scheme: 'OAuth', kind: 'oauth2' };

describe('extraCredentials: which alternative, and what it adds', () => {
  it('takes the first alternative naming the configured scheme whose other schemes all have a value', () => {
    const requirements = [[key, appId, token], [key, appId], [oauth]];
    expect(extraCredentials('F', requirements, 'api_key', { AppId: 'a' })).toEqual([
      { in: 'header', name: 'X-App-Id', value: 'a' },
    ]);
    expect(extraCredentials('F', requirements, 'api_key', { AppId: 'a', Token: 't' })).toEqual([
      { in: 'header', name: 'X-App-Id', value: 'a' },
      { in: 'query', name: 'token', value: 't' },
    ]);
    expect(extraCredentials('F', requirements, 'oauth2', {})).toEqual([]);
  });

  it('the app’s own api_key scheme, combined with OAuth 2.0, takes its value from the configuration too', () => {
    expect(extraCredentials('F', [[oauth, key]], 'oauth2', { Key: 'k' })).toEqual([
      { in: 'header', name: 'X-Key', value: 'k' },
    ]);
  });

  it('no_auth picks an empty requirement; a scheme no alternative names adds nothing', () => {
    expect(extraCredentials('F', [[], [key, appId]], 'no_auth', {})).toEqual([]);
    expect(extraCredentials('F', [[key, appId]], 'http_basic', {})).toEqual([]);
  });

  it('names every alternative that falls short, and what each lacks', () => {
    expect(() =>
      extraCredentials(
        'F',
        [
          [key, appId],
          [key, token],
        ],
        'api_key',
        {},
      ),
    ).toThrow(
      "F needs more than the linked account's api_key credential, and the app configuration gives too little: " +
        'Key + AppId lacks extra_credentials.AppId (sent as header X-App-Id); or Key + Token lacks ' +
        "extra_credentials.Token (sent as query token). Set the missing values in the app configuration's extra_credentials.",
    );
  });
});
