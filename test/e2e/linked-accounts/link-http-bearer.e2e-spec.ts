import { describeLinkEndpoint } from './link-endpoint.shared.js';

// linkHttpBearerAccount
describeLinkEndpoint({
  path: '/v1/linked-accounts/http-bearer',
  scheme: 'http_bearer',
  credentials: { token: 'bearer-token-4d5e6f-unique' },
  otherScheme: 'http_basic',
});
