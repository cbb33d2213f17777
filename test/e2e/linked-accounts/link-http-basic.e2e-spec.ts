import { describeLinkEndpoint } from './link-endpoint.shared.js';

// linkHttpBasicAccount
describeLinkEndpoint({
  path: '/v1/linked-accounts/http-basic',
  scheme: 'http_basic',
  credentials: { username: 'basic-user-7f3a', password: 'basic-pass-9c1e-unique' },
  otherScheme: 'http_bearer',
});
