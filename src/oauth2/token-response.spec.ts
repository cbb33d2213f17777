import { describe, expect, it } from 'vitest';
import { normaliseTokenResponse } from './token-response.js';

describe('normaliseTokenResponse', () => {
  it('keeps a standard answer, lower-casing the token type', () => {
    const text = JSON.stringify({
      access_token: 'at',
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: 'rt',
      scope: 'a b',
    });
    expect(normaliseTokenResponse(200, text)).toEqual({
      status: 200,
      body: { access_token: 'at', token_type: 'bearer', expires_in: 3600, refresh_token: 'rt', scope: 'a b' },
    });
  });

  it('takes nested tokens from the scheme path and defaults a non-standard token type', () => {
    const text = JSON.stringify({
      ok: true,
      access_token: 'xoxb-bot',
      token_type: 'bot',
      authed_user: { id: 'U1', access_token: 'xoxp-user', token_type: 'user', scope: 'chat:write' },
    });
    expect(normaliseTokenResponse(200, text, 'authed_user')).toEqual({
      status: 200,
      body: { id: 'U1', access_token: 'xoxp-user', token_type: 'bearer', scope: 'chat:write' },
    });
    expect(
      normaliseTokenResponse(200, JSON.stringify({ data: { tokens: { access_token: 'deep' } } }), 'data.tokens'),
    ).toMatchObject({ body: { access_token: 'deep', token_type: 'bearer' } });
  });

  it('answers an empty body when the path leads nowhere, so that the answer is refused', () => {
    expect(normaliseTokenResponse(200, JSON.stringify({ access_token: 'top' }), 'authed_user')).toEqual({
      status: 200,
      body: {},
    });
  });

  it('turns an error carried by a success status into an error answer', () => {
    const text = JSON.stringify({ error: 'bad_verification_code', error_description: 'The code is wrong' });
    expect(normaliseTokenResponse(200, text)).toEqual({
      status: 400,
      body: { error: 'bad_verification_code', error_description: 'The code is wrong' },
    });
    expect(normaliseTokenResponse(200, JSON.stringify({ ok: false, error: 'invalid_code' }), 'authed_user')).toEqual({
      status: 400,
      body: { error: 'invalid_code' },
    });
  });

  it('keeps error statuses, reading form-encoded answers too', () => {
    expect(normaliseTokenResponse(401, 'error=invalid_client&error_description=no')).toEqual({
      status: 401,
      body: { error: 'invalid_client', error_description: 'no' },
    });
    expect(normaliseTokenResponse(200, 'access_token=at&token_type=bearer&scope=repo')).toEqual({
      status: 200,
      body: { access_token: 'at', token_type: 'bearer', scope: 'repo' },
    });
  });

  it('drops an id_token and joins a list of scopes', () => {
    const text = JSON.stringify({ access_token: 'at', token_type: 'bearer', id_token: 'x.y.z', scope: ['a', 'b'] });
    expect(normaliseTokenResponse(201, text)).toEqual({
      status: 200,
      body: { access_token: 'at', token_type: 'bearer', scope: 'a b' },
    });
  });

  it('gives up on answers that are not objects', () => {
    expect(normaliseTokenResponse(502, '<html>Bad gateway</html>')).toBeUndefined();
    expect(normaliseTokenResponse(200, '["at"]')).toBeUndefined();
  });
});
