import { describeLinkEndpoint } from './link-endpoint.shared.js';

// linkNoAuthAccount: no credentials at all; `{}` is what gets sealed.
describeLinkEndpoint({
  path: '/v1/linked-accounts/no-auth',
  scheme: 'no_auth',
  credentials: {},
  otherScheme: 'api_key',
});
